"""Build one variant: plan (pure), then generate, configure (CMake), build (ninja), lay out
``build/<variant>/`` in a temporary sibling and move it into place only on success."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from kernelkit._version import __version__
from kernelkit.artifact.layout import seal_variant
from kernelkit.artifact.metadata import Metadata, Provenance
from kernelkit.builder.plan import VariantPlan, plan_variant
from kernelkit.builder.probe import TorchEnv, probe_python
from kernelkit.builder.toolkit import CudaToolkit, find_cuda_toolkit
from kernelkit.errors import BuildError, CommandError
from kernelkit.generate import build_files, write_files
from kernelkit.generate.cuda_archs import parse_capabilities
from kernelkit.generate.ids import GitState, git_state, kernel_commit, unique_id
from kernelkit.generate.python import render_ops_py
from kernelkit.manifest import Manifest, load_manifest
from kernelkit.manifest.deps import all_kernel_depends, python_depends_for
from kernelkit.manifest.model import KernelDependency, TorchFramework
from kernelkit.util.fs import replace_dir, temp_sibling
from kernelkit.util.run import run


@dataclass(frozen=True)
class BuildResult:
    variant: str
    path: Path
    log_path: Path
    metadata: Metadata
    seconds: float = 0.0


@dataclass(frozen=True)
class Tools:
    """The build tools of kernelkit's own environment (PyPI ``cmake`` and ``ninja``)."""

    cmake: Path
    ninja: Path

    @classmethod
    def find(cls) -> Tools:
        try:
            import cmake
            import ninja
        except ImportError as exc:
            raise BuildError("(any)", f"kernelkit's build tools are missing ({exc})",
                             hint="pip install 'kernelkit[build]'") from None
        return cls(Path(cmake.CMAKE_BIN_DIR) / "cmake", Path(ninja.BIN_DIR) / "ninja")


def cuda_capabilities_from_env(env: Mapping[str, str]) -> list[str] | None:
    """``KERNELKIT_CUDA_CAPABILITIES`` (e.g. ``"9.0"`` or ``"8.0,9.0+PTX"``), if set."""
    text = env.get("KERNELKIT_CUDA_CAPABILITIES", "").strip()
    return parse_capabilities(text) if text else None


def build_variant(project: Path, *, python: Path, backend: str, out_root: Path | None = None,
                  cuda_capabilities: list[str] | None = None,
                  jobs: int | None = None) -> BuildResult:
    """Build the ``backend`` variant of the kernel in ``project`` with the torch of ``python``
    into ``out_root`` (default ``<project>/build``). Reads ``KERNELKIT_CUDA_CAPABILITIES``,
    ``CUDA_HOME``/``CUDA_PATH`` and ``PATH`` when ``cuda_capabilities`` is not given."""
    project = Path(project).resolve()
    manifest = load_manifest(project)
    env = probe_python(Path(python))
    caps = cuda_capabilities or cuda_capabilities_from_env(os.environ)
    return build_one(manifest, env, backend, out_root=out_root, cuda_capabilities=caps, jobs=jobs,
                     environ=os.environ)


def build_one(manifest: Manifest, env: TorchEnv, backend: str, *, out_root: Path | None,
              cuda_capabilities: list[str] | None, jobs: int | None,
              environ: Mapping[str, str]) -> BuildResult:
    """Plan and build one variant for an already probed environment."""
    project = manifest.root.resolve()
    state = git_state(project)
    toolkit = find_cuda_toolkit(environ) if backend == "cuda" else None
    plan = plan_variant(manifest, env, backend, unique_id(project, state), toolkit=toolkit,
                        cuda_capabilities=cuda_capabilities)
    out_root = Path(out_root).resolve() if out_root is not None else project / "build"
    started = time.monotonic()
    scratch = Path(tempfile.mkdtemp(prefix=f"kernelkit-{plan.variant}-"))
    log_path = scratch / "build.log"
    library = compile_extension(manifest, env, plan, toolkit, scratch, log_path, jobs, environ)
    meta = variant_metadata(manifest, env, plan, toolkit, state)
    dest = out_root / plan.variant
    sealed = lay_out_variant(manifest, plan, library, meta, dest)
    for sub in ("src", "cmake-build", "out"):  # keep only the log
        shutil.rmtree(scratch / sub, ignore_errors=True)
    return BuildResult(plan.variant, dest, log_path, sealed, time.monotonic() - started)


def _configure_args(env: TorchEnv, plan: VariantPlan, toolkit: CudaToolkit | None,
                    project: Path, scratch: Path, tools: Tools) -> list[str]:
    defines = {
        "CMAKE_BUILD_TYPE": "Release",
        "CMAKE_MAKE_PROGRAM": str(tools.ninja),
        "Python3_EXECUTABLE": str(env.python),
        "KK_SOURCE_ROOT": str(project),
        "KK_OUTPUT_DIR": str(scratch / "out"),
        **plan.cmake_defines(),
    }
    if toolkit is not None:
        defines["CMAKE_CUDA_COMPILER"] = str(toolkit.nvcc)
        defines["CUDAToolkit_ROOT"] = str(toolkit.root)
    return [str(tools.cmake), "-S", str(scratch / "src"), "-B", str(scratch / "cmake-build"),
            "-G", "Ninja", *(f"-D{k}={v}" for k, v in defines.items())]


def compile_extension(manifest: Manifest, env: TorchEnv, plan: VariantPlan,
                      toolkit: CudaToolkit | None, scratch: Path, log_path: Path,
                      jobs: int | None, environ: Mapping[str, str]) -> Path:
    """Generate into ``scratch/src``, configure and build; return the extension module."""
    tools = Tools.find()
    write_files(scratch / "src", build_files(manifest, plan.unique_id))
    configure = _configure_args(env, plan, toolkit, manifest.root.resolve(), scratch, tools)
    build = [str(tools.cmake), "--build", str(scratch / "cmake-build"), "--verbose",
             "-j", str(jobs or os.cpu_count() or 1)]
    for step, cmd in (("configure (cmake)", configure), ("compile (ninja)", build)):
        try:
            run(cmd, log_path=log_path, what=step, env=environ)
        except CommandError as exc:
            raise BuildError(plan.variant, f"{step} failed\n{compiler_errors(exc, log_path)}",
                             log_path=log_path) from None
    found = sorted((scratch / "out").glob(f"{plan.ops_name}.*"))
    if not found:
        raise BuildError(plan.variant, f"the build produced no {plan.ops_name} module",
                         log_path=log_path)
    return found[0]


def compiler_errors(exc: CommandError, log_path: Path, max_lines: int = 60,
                    width: int = 240) -> str:
    """The compiler's error from the log: from ninja's last ``FAILED:`` line (else the output
    tail), with over-long lines (full compiler command lines) shortened."""
    text = log_path.read_text("utf-8", "replace") if log_path.is_file() else ""
    start = text.rfind("FAILED:")
    lines = text[start:].splitlines()[:max_lines] if start >= 0 else exc.output_tail.splitlines()
    return "\n".join(ln if len(ln) <= width else ln[:width] + " ..." for ln in lines)


def variant_metadata(manifest: Manifest, env: TorchEnv, plan: VariantPlan,
                     toolkit: CudaToolkit | None, state: GitState | None) -> Metadata:
    g = manifest.general
    extra: dict[str, object] = {"torch": env.torch_version, "python": env.python_version,
                                "cxx-standard": plan.cxx_standard}
    if toolkit is not None:
        extra["cuda-toolkit"] = toolkit.version
    return Metadata(
        name=g.name, id=plan.ops_name, version=g.version, license=g.license,
        backend=plan.backend, archs=plan.archs, upstream=g.upstream, source=g.source,
        python_depends=python_depends_for(g, plan.backend),
        kernel_depends=tuple(_kernel_dep(d) for d in all_kernel_depends(g)),
        provenance=Provenance(builder_version=f"kernelkit/{__version__}",
                              kernel=kernel_commit(state), extra=extra),
    )


def _kernel_dep(dep: KernelDependency) -> dict[str, object]:
    out: dict[str, object] = {"repo-id": dep.repo_id}
    if dep.version is not None:
        out["version"] = dep.version
    if dep.revision is not None:
        out["revision"] = dep.revision
    return out


def package_files(manifest: Manifest) -> list[tuple[Path, str]]:
    """``(source, relpath)`` of the files shipped from ``torch-ext/<python_name>/``: those whose
    extension is in ``[torch] pyext`` (bytecode and ``_ops.py`` left out)."""
    assert isinstance(manifest.framework, TorchFramework)
    pkg = manifest.root / "torch-ext" / manifest.general.python_name
    exts = {f".{e}" for e in manifest.framework.pyext}
    out = []
    for path in sorted(pkg.rglob("*")):
        rel = path.relative_to(pkg).as_posix()
        if (path.is_file() and path.suffix in exts and "__pycache__" not in path.parts
                and rel != "_ops.py"):
            out.append((path, rel))
    return out


def lay_out_variant(manifest: Manifest, plan: VariantPlan, library: Path, meta: Metadata,
                    dest: Path) -> Metadata:
    """Assemble the variant in a temporary sibling of ``dest``, seal it, move it into place."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = temp_sibling(dest, "building")
    staging.mkdir()
    try:
        for src, rel in package_files(manifest):
            (staging / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, staging / rel)
        ops = render_ops_py(manifest.general.python_name, plan.unique_id, plan.backend)
        (staging / "_ops.py").write_text(ops, encoding="utf-8")
        shutil.copyfile(library, staging / library.name)
        sealed = seal_variant(staging, meta)
        replace_dir(staging, dest)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return sealed
