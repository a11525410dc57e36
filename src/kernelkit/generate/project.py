"""The generated file set of a ``[torch]`` kernel project, and the one writer that touches disk."""

from __future__ import annotations

from pathlib import Path

from kernelkit.errors import KernelkitError
from kernelkit.generate.cmake import render_cmakelists
from kernelkit.generate.ids import (
    OPS_ID_HEADER,
    OPS_ID_SOURCE,
    render_ops_id_header,
    render_ops_id_source,
)
from kernelkit.generate.python import (
    module_source,
    render_ops_py,
    render_pyproject,
    render_setup_py,
    template,
)
from kernelkit.generate.tvm_ffi_files import tvm_ffi_build_files
from kernelkit.manifest.model import Manifest, TorchFramework, TvmFfi
from kernelkit.util.fs import atomic_write_text

# Helper files copied verbatim into <project>/cmake/: (destination, kind, source name).
_HELPERS: tuple[tuple[str, str, str], ...] = (
    ("cmake/kernelkit.cmake", "template", "kernelkit.cmake"),
    ("cmake/kernelkit_compat.c", "template", "kernelkit_compat.c"),
    ("cmake/kernelkit_compat.cpp", "template", "kernelkit_compat.cpp"),
    ("cmake/kernelkit_cuda_archs.py", "module", "cuda_archs.py"),
    ("cmake/kernelkit_torch_info.py", "module", "torch_info.py"),
    ("torch-ext/registration.h", "template", "registration.h"),
)


def build_files(manifest: Manifest, uid: str,
                namespace_sources: tuple[str, ...] = ("*",)) -> dict[str, str]:
    """Files CMake needs to build the extension (no Python packaging, no ``_ops.py``);
    ``namespace_sources``: the units that get ``TORCH_EXTENSION_NAME`` (``("*",)``: all)."""
    if isinstance(manifest.framework, TvmFfi):
        return tvm_ffi_build_files(manifest, uid)
    if not isinstance(manifest.framework, TorchFramework):
        raise KernelkitError(
            f"{manifest.path or 'build.toml'}: only [torch] and [tvm-ffi] kernels are compiled "
            "by kernelkit", hint="[torch-noarch] kernels have nothing to compile")
    files = {"CMakeLists.txt": render_cmakelists(manifest, namespace_sources)}
    for dest, kind, name in _HELPERS:
        files[dest] = template(name) if kind == "template" else module_source(name)
    files[OPS_ID_HEADER] = render_ops_id_header(manifest.general.python_name, uid)
    files[OPS_ID_SOURCE] = render_ops_id_source()
    return files


def project_files(manifest: Manifest, uid: str,
                  namespace_sources: tuple[str, ...] = ("*",)) -> dict[str, str]:
    """Everything ``kernelkit create-pyproject`` writes, keyed by POSIX path relative to the
    project: CMake files, ``setup.py``, ``pyproject.toml``, ``registration.h`` and the dev
    ``torch-ext/<python_name>/_ops.py``."""
    files = build_files(manifest, uid, namespace_sources)
    py = manifest.general.python_name
    files["setup.py"] = render_setup_py(manifest, uid)
    files["pyproject.toml"] = render_pyproject(manifest)
    files[f"torch-ext/{py}/_ops.py"] = render_ops_py(py, uid)
    return dict(sorted(files.items()))


def generated_paths(manifest: Manifest) -> list[str]:
    """The relative paths ``project_files`` produces (independent of the unique id)."""
    return list(project_files(manifest, "0000000"))


def write_files(root: Path, files: dict[str, str], *, force: bool = False) -> list[Path]:
    """Write ``files`` under ``root``; return the paths written (unchanged files are skipped).

    Without ``force``, an existing file with different content is never overwritten: the
    error lists every such file before anything is written.
    """
    conflicts = [rel for rel, text in files.items()
                 if (root / rel).is_file() and (root / rel).read_text("utf-8", "replace") != text]
    if conflicts and not force:
        listing = "\n".join(f"  - {root / rel}" for rel in sorted(conflicts))
        raise KernelkitError(f"generated files differ from existing files:\n{listing}",
                             hint="pass -f/--force to overwrite them")
    written = []
    for rel, text in files.items():
        path = root / rel
        if path.is_file() and path.read_text("utf-8", "replace") == text:
            continue
        atomic_write_text(path, text)
        written.append(path)
    return written
