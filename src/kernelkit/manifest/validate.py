"""Checks that span fields: run on the model after reading, problems go to the same ``Reader``.

Two deliberate differences from upstream ``kernel-builder``:

* a ``[kernel.<name>]`` whose ``backend`` is not listed in ``general.backends`` is a problem
  (upstream silently never builds it, which hides typos and forgotten backends);
* ``python-depends`` ids are checked here, when the manifest is read, instead of at
  file-generation time, and source/include paths are checked to exist when the project root is
  known (upstream lets the compiler fail later).
"""

from __future__ import annotations

from pathlib import Path

from kernelkit.manifest.deps import python_dependency_ids
from kernelkit.manifest.model import KERNEL_BACKENDS, Manifest, TorchNoarch
from kernelkit.manifest.values import Reader


def check_manifest(manifest: Manifest, r: Reader, root: Path | None,
                   check_sources: bool) -> None:
    """Record every cross-field problem of ``manifest`` in ``r``."""
    check_kernel_backends(manifest, r)
    check_python_depends(manifest, r)
    if check_sources and root is not None:
        check_sources_exist(manifest, r, root)


def check_kernel_backends(manifest: Manifest, r: Reader) -> None:
    if any(p.field == "general.backends" for p in r.problems):
        return  # the list is missing or not a list; do not pile on
    listed = manifest.general.backends
    for kernel in manifest.kernels:
        if kernel.backend in KERNEL_BACKENDS and kernel.backend not in listed:
            r.problem(f"kernel.{kernel.name}.backend",
                      f"backend `{kernel.backend}` of [kernel.{kernel.name}] is not listed in "
                      f"general.backends {list(listed)}; add it there or remove this kernel")


def check_python_depends(manifest: Manifest, r: Reader) -> None:
    general = manifest.general
    _check_ids(r, "general.python-depends", general.python_depends, None)
    for backend in ("cuda", "neuron", "tpu", "xpu"):
        extra = getattr(general, backend)
        if extra is not None:
            _check_ids(r, f"general.{backend}.python-depends", extra.python_depends, backend)


def _check_ids(r: Reader, field: str, ids: tuple[str, ...], backend: str | None) -> None:
    if r.has_problem(field):
        return
    allowed = python_dependency_ids(backend)
    for i, dep in enumerate(ids):
        if allowed is None:
            r.problem(f"{field}[{i}]", f"no Python dependencies are defined for backend "
                      f"{backend}; remove `{dep}`")
        elif dep not in allowed:
            scope = f"backend {backend}" if backend else "all backends"
            known = ", ".join(allowed) or "none"
            r.problem(f"{field}[{i}]", f"unknown Python dependency `{dep}` for {scope}; "
                      f"known ids: {known}")


def check_sources_exist(manifest: Manifest, r: Reader, root: Path) -> None:
    framework = manifest.framework
    if not isinstance(framework, TorchNoarch):
        _check_paths(r, root, f"{framework.kind}.src", framework.src, directory=False)
        _check_paths(r, root, f"{framework.kind}.include", framework.include, directory=True)
    for kernel in manifest.kernels:
        field = f"kernel.{kernel.name}"
        _check_paths(r, root, f"{field}.src", kernel.src, directory=False)
        _check_paths(r, root, f"{field}.include", kernel.include, directory=True)


def _check_paths(r: Reader, root: Path, field: str, paths: tuple[str, ...],
                 directory: bool) -> None:
    if r.has_problem(field):
        return
    for i, rel in enumerate(paths):
        path = root / rel
        ok = path.is_dir() if directory else path.is_file()
        if not ok:
            what = "include directory" if directory else "source file"
            r.problem(f"{field}[{i}]", f"{what} `{rel}` does not exist (looked in {root}); "
                      "fix the path or create the file")
