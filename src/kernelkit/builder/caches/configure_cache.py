"""Configured CMake trees, kept so that a clean rebuild in the same place skips CMake's configure.

A configure of a CUDA variant costs 2-4 s (CMake identifies and tests the C, C++ and CUDA
compilers, finds Python and the toolkit) and is the largest fixed cost of a rebuild whose
objects all come from the compiler cache. After a successful configure its tree (without
the compiler-identification scratch files) is kept under a key that covers everything the
configure read: kernelkit's configure fingerprint (arguments, compiler variables, torch,
toolkit), every generated CMake input, and the identity (path, size, mtime) of cmake, the
compilers and the CUDA toolkit's nvcc. A build directory without a CMake tree whose key has an
entry gets that tree back instead of configuring. CMake trees hold absolute paths, so the key
includes the build directory: another checkout configures afresh (and still hits ccache).

``KERNELKIT_CONFIGURE_CACHE`` names the directory (default ``~/.cache/kernelkit/configure``);
``0`` turns it off. The newest :data:`KEEP` entries are kept.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path

from kernelkit.settings import KERNELKIT_CONFIGURE_CACHE
from kernelkit.util.fs import replace_dir, temp_sibling
from kernelkit.util.paths import user_cache_dir

KEEP = 64
ID_DIR = "compiler-id"  # the compiler identification cache's room (compiler_id_cache.py)
# Scratch CMake leaves after identifying the compilers; nothing reads them afterwards.
_SKIP = ("CompilerIdC", "CompilerIdCXX", "CompilerIdCUDA", "CMakeScratch",
         "CMakeConfigureLog.yaml", ".ninja_log", ".ninja_deps")


def configure_cache_dir(environ: Mapping[str, str]) -> Path | None:
    """The configure cache directory (``None``: turned off with ``KERNELKIT_CONFIGURE_CACHE=0``)."""
    if KERNELKIT_CONFIGURE_CACHE.off(environ):
        return None
    return KERNELKIT_CONFIGURE_CACHE.read(environ) or user_cache_dir(environ) / "configure"


def tool_identity(path: Path | None) -> str:
    """``path:size:mtime_ns`` of a program (``-`` for none, ``path:missing``): a reinstalled
    tool is another identity."""
    if path is None:
        return "-"
    try:
        st = path.stat()
    except OSError:
        return f"{path}:missing"
    return f"{path}:{st.st_size}:{st.st_mtime_ns}"


def configure_key(fingerprint: str, inputs: Path, build_dir: Path,
                  tools: Iterable[Path | None]) -> str:
    """The key of a configure: ``fingerprint``, the files under ``inputs`` (the generated CMake
    project), the build directory, and the identity of each tool."""
    h = hashlib.sha256(f"{fingerprint}\0{build_dir.resolve()}\0".encode())
    for tool in tools:
        h.update(tool_identity(tool).encode() + b"\0")
    for path in sorted(p for p in inputs.rglob("*") if p.is_file()):
        h.update(path.relative_to(inputs).as_posix().encode() + b"\0")
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()[:40]


def _ignore(_dir: str, names: list[str]) -> list[str]:
    return [n for n in names if n in _SKIP]


def restore(cache: Path, key: str, build_dir: Path) -> bool:
    """Put the kept tree of ``key`` at ``build_dir`` (which must hold no CMake tree); ``True``
    when there was one. Files get fresh times, so ninja sees the tree as newer than its inputs."""
    kept = cache / key
    if not (kept / "build.ninja").is_file() or (build_dir / "build.ninja").exists():
        return False
    shutil.rmtree(build_dir, ignore_errors=True)
    try:
        shutil.copytree(kept, build_dir, copy_function=shutil.copyfile, symlinks=True)
    except OSError:
        shutil.rmtree(build_dir, ignore_errors=True)
        return False
    os.utime(kept)  # recently used: kept longest
    return True


def store(cache: Path, key: str, build_dir: Path) -> None:
    """Keep the freshly configured tree at ``build_dir`` under ``key`` (best effort: a cache
    that cannot be written only costs the next clean rebuild a configure)."""
    dest = cache / key
    if (dest / "build.ninja").is_file():
        return
    try:
        cache.mkdir(parents=True, exist_ok=True)
        staging = temp_sibling(dest, "storing")
        shutil.copytree(build_dir, staging, ignore=_ignore, symlinks=True)
        replace_dir(staging, dest)
        _prune(cache)
    except OSError:
        return


def _prune(cache: Path) -> None:
    entries = sorted((p for p in cache.iterdir()
                      if p.is_dir() and not p.name.startswith(".") and p.name != ID_DIR),
                     key=lambda p: p.stat().st_mtime, reverse=True)
    for old in entries[KEEP:]:
        shutil.rmtree(old, ignore_errors=True)
