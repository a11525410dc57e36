"""What every variant ships besides its compiled code, in one place for arch, stable-ABI,
tvm-ffi and noarch builds: the project's Python package files and the ``kernel-depends``
entries of ``metadata.json``."""

from __future__ import annotations

from pathlib import Path

from kernelkit.manifest import Manifest
from kernelkit.manifest.model import KernelDependency, TvmFfi


def package_dir(manifest: Manifest) -> Path:
    """``torch-ext/<python_name>/`` (a ``[tvm-ffi]`` kernel: ``tvm-ffi-ext/<python_name>/``)."""
    ext_dir = "tvm-ffi-ext" if isinstance(manifest.framework, TvmFfi) else "torch-ext"
    return manifest.root / ext_dir / manifest.general.python_name


def package_files(manifest: Manifest) -> list[tuple[Path, str]]:
    """``(source, relpath)`` of the package files whose extension is in ``pyext`` (bytecode
    and a checked-in ``_ops.py``, which the build generates, left out)."""
    pkg = package_dir(manifest)
    exts = {f".{e}" for e in getattr(manifest.framework, "pyext", ("py", "pyi"))}
    out = []
    for path in sorted(pkg.rglob("*")):
        rel = path.relative_to(pkg).as_posix()
        if (path.is_file() and path.suffix in exts and "__pycache__" not in path.parts
                and rel != "_ops.py"):
            out.append((path, rel))
    return out


def kernel_dependency(dep: KernelDependency) -> dict[str, object]:
    """One ``kernel-depends`` entry of ``metadata.json``."""
    out: dict[str, object] = {"repo-id": dep.repo_id}
    if dep.version is not None:
        out["version"] = dep.version
    if dep.revision is not None:
        out["revision"] = dep.revision
    return out
