"""Build a noarch variant (``build/torch-<backend>/``): nothing to compile.

Upstream (upstream-builder.md §3.6-§3.8) builds ``[torch-noarch]`` kernels, and backends of a
``[torch]`` kernel that have no compiled component, by copying the package under
``torch-ext/<python_name>/`` (the files whose extension is in ``pyext``) next to a generated
``_ops.py`` and the backend's ``metadata.json``. kernelkit does the same in a temporary sibling
of the variant directory, seals it (digests) and moves it into place, as for compiled variants.
No torch is imported and no environment is prepared: any interpreter builds it.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from kernelkit._version import __version__
from kernelkit.artifact.layout import seal_variant
from kernelkit.artifact.metadata import Metadata, Provenance
from kernelkit.builder.compile.events import BuildResult
from kernelkit.builder.compile.provenance import GitState, kernel_commit, sources_record
from kernelkit.builder.plan.package import kernel_dependency, package_dir, package_files
from kernelkit.errors import NotBuildableError
from kernelkit.generate.ids import ops_name
from kernelkit.generate.python import render_noarch_ops_py
from kernelkit.manifest import Manifest
from kernelkit.manifest.deps import all_kernel_depends, python_depends_for
from kernelkit.manifest.model import TorchNoarch
from kernelkit.util.fs import replace_dir, temp_sibling


def noarch_archs(manifest: Manifest, backend: str) -> tuple[str, ...] | None:
    """``backend.archs`` of the metadata: what ``[torch-noarch]`` declares for the backend,
    verbatim (upstream copies ``cuda_capabilities`` / ``rocm_archs`` unsorted)."""
    fw = manifest.framework
    if not isinstance(fw, TorchNoarch):
        return None
    declared = {"cuda": fw.cuda_capabilities, "rocm": fw.rocm_archs}.get(backend, ())
    return tuple(declared) or None


def noarch_metadata(manifest: Manifest, backend: str, uid: str,
                    state: GitState | None) -> Metadata:
    g = manifest.general
    return Metadata(
        name=g.name, id=ops_name(g.python_name, backend, uid), version=g.version,
        license=g.license, backend=backend, archs=noarch_archs(manifest, backend),
        upstream=g.upstream, source=g.source,
        python_depends=python_depends_for(g, backend),
        kernel_depends=tuple(kernel_dependency(d) for d in all_kernel_depends(g)),
        provenance=Provenance(builder_version=f"kernelkit/{__version__}",
                              kernel=kernel_commit(state),
                              extra={"kind": "noarch",
                                     "sources": sources_record(manifest, state)}),
    )


def build_noarch(manifest: Manifest, variant: str, backend: str, uid: str, *, out_root: Path,
                 state: GitState | None, log_path: Path) -> BuildResult:
    """Lay out and seal ``out_root/<variant>`` (``torch-<backend>``); raise a project
    :class:`NotBuildableError` if the package is missing."""
    started = time.monotonic()
    pkg = package_dir(manifest)
    if not (pkg / "__init__.py").is_file():
        raise NotBuildableError(f"variant {variant}", f"{pkg / '__init__.py'} does not exist",
                                who="project", hint="a kernel's Python package lives in "
                                "torch-ext/<python name>/ (general.name with - as _)")
    files = package_files(manifest)
    dest = out_root / variant
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = temp_sibling(dest, "building")
    staging.mkdir()
    try:
        for src, rel in files:
            (staging / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, staging / rel)
        ops = render_noarch_ops_py(manifest.general.python_name, uid)
        (staging / "_ops.py").write_text(ops, encoding="utf-8")
        sealed = seal_variant(staging, noarch_metadata(manifest, backend, uid, state))
        replace_dir(staging, dest)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log_path.write_text("".join(f"copied torch-ext/{manifest.general.python_name}/{rel}\n"
                                for _, rel in files) + "generated _ops.py, metadata.json\n",
                        encoding="utf-8")
    return BuildResult(variant, dest, log_path, sealed, time.monotonic() - started)
