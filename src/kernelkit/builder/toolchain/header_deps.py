"""Header-only ``depends`` (CUTLASS): pinned PyPI wheels or explicit local paths, never a
download at configure time.

Where a ``cutlass_X_Y`` id's headers come from, first match wins:

1. ``$KERNELKIT_CUTLASS_X_Y_DIR`` (or upstream's ``$CUTLASS_SRC_DIR``): a local CUTLASS root;
   the generated CMake reads these itself, so kernelkit passes nothing;
2. the toolchain lock's ``dependencies.<id>`` wheel (``nvidia-cutlass``, pinned by sha256):
   fetched once by pip with ``--require-hashes`` (so pip's configured sources, a local
   wheelhouse included, serve it offline), unpacked into the kernelkit cache, and passed to
   CMake as ``-DKK_DEP_DIR_<id>=<cache>/.../cutlass_library/source``.

Neither: CMake stops with a message naming the variable to set.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
import zipfile
from collections.abc import Callable, Mapping
from pathlib import Path

from kernelkit.builder.toolchain.toolchain_lock import (
    LockedWheel,
    ToolchainLock,
    file_url_path,
    requirements_text,
)
from kernelkit.errors import IntegrityError, LockError
from kernelkit.manifest.deps import (
    CUTLASS_WHEEL_ROOT,
    cutlass_depends,
    cutlass_env_var,
)
from kernelkit.manifest.model import Manifest
from kernelkit.settings import CUTLASS_SRC_DIR
from kernelkit.util.paths import user_cache_dir
from kernelkit.util.run import run

_DONE = ".kernelkit-unpacked"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _download(wheel: LockedWheel, python: Path, dest: Path) -> Path:
    local = file_url_path(wheel.url)
    if local is not None and local.is_file():
        return local
    with tempfile.TemporaryDirectory(prefix="kernelkit-dep-") as tmp:
        req = Path(tmp) / "requirements.txt"
        req.write_text(requirements_text([wheel]), encoding="utf-8")
        run([str(python), "-m", "pip", "download", "--quiet", "--no-deps", "--require-hashes",
             "-r", str(req), "-d", str(dest)], what=f"pip (download {wheel.filename})")
    return dest / wheel.filename


def unpack_locked_wheel(wheel: LockedWheel, *, python: Path, cache_dir: Path, kind: str,
                        members: Callable[[str], bool]) -> Path:
    """Fetch ``wheel`` (pip with ``--require-hashes``, or its local ``file://`` path), check its
    sha256, and unpack the ``members`` it names into ``<cache_dir>/<kind>/<name>-<version>-<hash>``
    (done once per hash); return that directory."""
    target = cache_dir / kind / f"{wheel.name}-{wheel.version}-{wheel.sha256[:16]}"
    if (target / _DONE).is_file():
        return target
    target.mkdir(parents=True, exist_ok=True)
    archive = _download(wheel, python, target)
    actual = _sha256(archive)
    if actual != wheel.sha256:
        if archive.parent == target:
            archive.unlink()
        raise IntegrityError(archive, wheel.sha256, actual)
    with zipfile.ZipFile(archive) as zf:
        zf.extractall(target, [n for n in zf.namelist() if members(n)])
    if archive.parent == target:
        archive.unlink()
    (target / _DONE).write_text(wheel.sha256 + "\n", encoding="utf-8")
    return target


def unpack_header_wheel(wheel: LockedWheel, *, python: Path, cache_dir: Path) -> Path:
    """The CUTLASS root inside the unpacked wheel (cached by its hash)."""
    target = unpack_locked_wheel(wheel, python=python, cache_dir=cache_dir, kind="deps",
                                 members=lambda n: n.startswith(CUTLASS_WHEEL_ROOT + "/"))
    root = target / CUTLASS_WHEEL_ROOT
    if not (root / "include" / "cutlass" / "version.h").is_file():
        shutil.rmtree(target, ignore_errors=True)
        raise LockError(f"{wheel.filename}: no {CUTLASS_WHEEL_ROOT}/include/cutlass in the wheel",
                        hint="pin a CUTLASS root with KERNELKIT_<ID>_DIR instead")
    return root


def dependency_defines(manifest: Manifest, backend: str, lock: ToolchainLock | None, *,
                       python: Path, environ: Mapping[str, str],
                       cache_dir: Path | None = None) -> dict[str, str]:
    """``KK_DEP_DIR_<id>`` CMake defines for the locked wheels the build needs."""
    if backend != "cuda":
        return {}
    defines: dict[str, str] = {}
    for dep in cutlass_depends(manifest.kernels):
        if environ.get(cutlass_env_var(dep)) or CUTLASS_SRC_DIR.raw(environ):
            continue  # a local path the generated CMake reads itself
        wheel = lock.dependencies.get(dep) if lock is not None else None
        if wheel is None:
            continue  # CMake names the variable to set
        root = unpack_header_wheel(wheel, python=python,
                                   cache_dir=cache_dir or user_cache_dir(environ))
        defines[f"KK_DEP_DIR_{dep}"] = str(root)
    return defines
