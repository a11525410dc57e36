"""Python dependencies of a kernel (``metadata.python-depends``), checked before import.

Each id is looked up in the curated table (``manifest/python_dependencies.json``): the general
ids first, then those of the kernel's backend, as upstream (upstream-loader.md §2.10). An id
not in the table is refused; a package whose import name is not importable is reported with
the pip command that installs it. ``torch`` is accepted as always present. Unlike upstream,
every loader checks (at import time), so a missing package fails clearly, not deep inside.
"""

from __future__ import annotations

import importlib.util

from kernelkit.artifact.metadata import Metadata
from kernelkit.errors import KernelDependencyError, UnsupportedDependencyError


def validate_python_depends(metadata: Metadata) -> None:
    """Raise if a python dependency of the kernel is unknown or not installed."""
    deps = [d for d in metadata.python_depends if d != "torch"]
    if not deps:
        return
    from kernelkit.manifest.deps import python_packages  # only kernels that declare deps pay

    for dep in deps:
        try:
            packages = python_packages(dep)
        except KeyError:
            try:
                packages = python_packages(dep, metadata.backend)
            except KeyError:
                raise UnsupportedDependencyError(
                    f"Kernel module `{metadata.python_name}` uses unsupported kernel "
                    f"dependency: {dep}",
                    hint="the kernel was built with a python-depends id this kernelkit does "
                    "not know; upgrade kernelkit or rebuild the kernel") from None
        for pkg in packages:
            if pkg.import_name and importlib.util.find_spec(pkg.import_name) is None:
                raise KernelDependencyError(
                    f"Kernel module `{metadata.python_name}` requires Python dependency "
                    f"`{pkg.pkg}`. Please install with: pip install {pkg.pkg}")
