"""CMake's compiler identification, kept per toolchain so that a fresh configure skips it.

Every fresh CMake tree identifies its compilers first: it compiles and runs test programs for
C, C++ and CUDA (for CUDA alone 2-3 s: nvcc builds CMake's identification source and an ABI
probe) and writes what it learned to ``CMakeFiles/<cmake version>/CMakeSystem.cmake`` and
``CMake<LANG>Compiler.cmake``. Those facts belong to the machine's toolchain, not to the
project or the build directory, yet each variant of a ``--all`` build, each new checkout and
each CI shard learns them again.

After a configure that identified a compiler, its files are kept under a key that covers
what identification reads: cmake itself, the compilers (``CC``/``CXX``/``CUDACXX``/
``CUDAHOSTCXX`` or the ``cc``/``c++`` on ``PATH``, nvcc), the binutils CMake looks up on
``PATH`` (``ar``, ``ld``, ...), the compiler flags from the environment and the configure's
``-DCMAKE_*``/``-DCUDAToolkit_ROOT`` settings; each tool by path, size and mtime, so a
reinstalled compiler is a new key. A fresh tree whose key has files gets them before CMake
starts, with ``CMAKE_PLATFORM_INFO_INITIALIZED`` set: CMake then loads them as it would in a
tree it configured before (a language the kept files lack is identified as usual and added).

Kept files that no longer fit (a configure fails with them) are dropped and the configure is
repeated without them, so the cost of a wrong entry is one configure, never a failed build.
It lives beside the configure cache (``KERNELKIT_CONFIGURE_CACHE``, which also turns it off).
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path

from kernelkit.builder.caches.configure_cache import ID_DIR, tool_identity
from kernelkit.util.fs import atomic_write_text

SEED_DEFINE = "-DCMAKE_PLATFORM_INFO_INITIALIZED=1"
_BINUTILS = ("ar", "ranlib", "ld", "nm", "objcopy", "objdump", "strip", "readelf", "addr2line")
_ENV = ("CC", "CXX", "CUDACXX", "CUDAHOSTCXX", "CFLAGS", "CXXFLAGS", "CUDAFLAGS", "LDFLAGS",
        "CUDA_PATH", "CUDA_HOME", "SDKROOT")


def identification_key(configure: Iterable[str], environ: Mapping[str, str],
                       tools: Iterable[Path | None]) -> str:
    """The key of what CMake's compiler identification would find: the ``-DCMAKE_*`` and
    ``-DCUDAToolkit_ROOT`` settings and the generator of ``configure`` (a cmake command line),
    the compiler variables of ``environ``, ``tools`` (cmake, ninja, the compilers) and the
    binutils found on ``environ``'s ``PATH``."""
    args = [a for a in configure
            if a.startswith(("-DCMAKE_", "-DCUDAToolkit_ROOT=")) or a in ("-G", "Ninja")]
    h = hashlib.sha256("\0".join(args).encode() + b"\1")
    for var in _ENV:
        h.update(f"{var}={environ.get(var, '')}\0".encode())
    path = environ.get("PATH")
    found = [shutil.which(name, path=path) for name in _BINUTILS]
    for tool in [*tools, *(Path(f) if f else None for f in found)]:
        h.update(tool_identity(tool).encode() + b"\0")
    return h.hexdigest()[:40]


def _platform_files(build_dir: Path) -> list[Path]:
    root = build_dir / "CMakeFiles"
    if not root.is_dir():
        return []
    return sorted(p for p in root.glob("*/CMake*.cmake")
                  if p.name == "CMakeSystem.cmake" or p.name.endswith("Compiler.cmake"))


def seed(cache: Path, key: str, build_dir: Path) -> bool:
    """Put the kept identification of ``key`` into ``build_dir``, a directory CMake has not
    configured yet; ``True`` when there was one (the configure must then be given
    :data:`SEED_DEFINE`)."""
    kept = cache / ID_DIR / key
    files = sorted(kept.glob("*/CMakeSystem.cmake"))
    if not files or (build_dir / "CMakeCache.txt").exists():
        return False
    version_dir = files[0].parent
    dest = build_dir / "CMakeFiles" / version_dir.name
    try:
        dest.mkdir(parents=True, exist_ok=True)
        for path in version_dir.glob("CMake*.cmake"):
            shutil.copyfile(path, dest / path.name)
    except OSError:
        return False
    return True


def keep(cache: Path, key: str, build_dir: Path) -> None:
    """Keep the identification files of the configured ``build_dir`` under ``key``, adding
    languages the entry lacks (best effort: a cache that cannot be written costs the next
    fresh configure its identification)."""
    try:
        for path in _platform_files(build_dir):
            dest = cache / ID_DIR / key / path.parent.name / path.name
            if not dest.is_file():
                atomic_write_text(dest, path.read_text(encoding="utf-8"))
    except OSError:
        return


def drop(cache: Path, key: str, build_dir: Path) -> None:
    """Forget ``key``'s entry (it did not fit this toolchain) and clear ``build_dir``, which a
    configure with it left half made."""
    shutil.rmtree(cache / ID_DIR / key, ignore_errors=True)
    shutil.rmtree(build_dir, ignore_errors=True)
