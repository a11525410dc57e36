"""Build one planned variant: the only code that compiles.

``build_variant(manifest, plan, env, workdir, ...)`` generates the CMake project into
``workdir/src`` (unchanged files keep their mtime, so a persistent ``workdir`` lets ninja reuse
objects), configures and compiles it in ``workdir/cmake-build`` with the environment's
interpreter and toolkit, lays out ``<out_root>/<variant>/`` in a temporary sibling, seals it
(``metadata.json`` + digests) and moves it into place only on success; the previous tree is
untouched by a failure. With a :class:`~kernelkit.builder.caches.build_cache.BuildCache` the cache
key is recorded (and written into the variant's provenance).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from kernelkit._version import __version__
from kernelkit.artifact.layout import seal_variant
from kernelkit.artifact.metadata import Metadata, Provenance
from kernelkit.builder.caches import compiler_id_cache
from kernelkit.builder.caches.build_cache import BuildCache
from kernelkit.builder.caches.compiler_cache import ccache_environ, locked_ccache, read_stats
from kernelkit.builder.caches.configure_cache import (
    configure_cache_dir,
    configure_key,
    restore,
    store,
)
from kernelkit.builder.compile.diagnostics import first_errors
from kernelkit.builder.compile.events import BuildEvent, BuildResult, OnEvent, ignore_event
from kernelkit.builder.compile.namespace_units import namespace_units
from kernelkit.builder.compile.progress import NinjaProgress, ninja_log_length, unit_times
from kernelkit.builder.compile.provenance import GitState, kernel_commit, sources_record
from kernelkit.builder.plan.package import kernel_dependency, package_files
from kernelkit.builder.plan.variant_plan import VariantPlan
from kernelkit.builder.toolchain.build_tools import find_cmake_ninja
from kernelkit.builder.toolchain.environment import BuildEnvironment
from kernelkit.builder.toolchain.header_deps import dependency_defines
from kernelkit.builder.toolchain.toolchain_lock import ToolchainLock
from kernelkit.errors import BuildError, CommandError
from kernelkit.generate import build_files, write_files
from kernelkit.generate.ids import target_name
from kernelkit.generate.python import render_ops_py
from kernelkit.generate.tvm_ffi_files import render_tvm_ffi_ops_py
from kernelkit.manifest import Manifest
from kernelkit.manifest.deps import all_kernel_depends, python_depends_for
from kernelkit.manifest.model import TorchFramework, TvmFfi
from kernelkit.settings import CC, CXX, PATH, Text
from kernelkit.util.fs import (
    atomic_write_text,
    file_lock,
    recover_dir,
    remove_stale_siblings,
    replace_dir,
    temp_sibling,
)
from kernelkit.util.paths import user_cache_dir
from kernelkit.util.run import run


@dataclass(frozen=True)
class Tools:
    """The build tools of kernelkit's own environment (PyPI ``cmake`` and ``ninja``)."""

    cmake: Path
    ninja: Path

    @classmethod
    def find(cls) -> Tools:
        """Raises a machine ``NotBuildableError`` saying what to install when one is missing."""
        return cls(*find_cmake_ninja())


def build_variant(manifest: Manifest, plan: VariantPlan, env: BuildEnvironment, workdir: Path,
                  *, out_root: Path, jobs: int, nvcc_threads: int = 1, state: GitState | None,
                  toolchain_lock: ToolchainLock | None,
                  cache: BuildCache | None = None, compiler_cache: Path | None = None,
                  on_event: OnEvent = ignore_event) -> BuildResult:
    """Compile ``plan`` with ``env`` in ``workdir`` into ``out_root/<variant>``; raise
    :class:`BuildError` (naming the variant, with the compiler's error and the log) on failure.
    ``compiler_cache`` is the ccache directory (``None``: no compiler cache);
    ``toolchain_lock`` the project's (read once per run: its pinned ccache and header-only
    dependency wheels). Holds the
    variant's build lock, and first repairs what a killed build left (``recover_dir``)."""
    started = time.monotonic()
    workdir.mkdir(parents=True, exist_ok=True)
    with file_lock(workdir / "build.lock"):  # one build of a variant at a time
        dest = out_root / plan.variant
        recover_dir(dest)  # what a build killed mid-way left: the old tree back, staging removed
        remove_stale_siblings(dest, ("building", "old"))
        _forget_moved_tree(workdir / "cmake-build")
        write_files(workdir / "src", build_files(manifest, plan.unique_id,
                                                 namespace_units(manifest)), force=True)
        log_path = workdir / "build.log"
        log_path.write_text("", encoding="utf-8")
        since = ninja_log_length(workdir / "cmake-build")
        stats_log = workdir / "ccache-stats.log"
        ccache = None
        if compiler_cache is not None:  # the toolchain lock's pinned ccache, if it has one
            ccache = locked_ccache(toolchain_lock, python=env.python,
                                   cache_root=user_cache_dir(env.environ))
        launch = ccache_environ(env.environ, cache_dir=compiler_cache,
                                project=manifest.root.resolve(), stats_log=stats_log,
                                ccache=ccache)
        library = compile_extension(manifest, env, plan, workdir, log_path, jobs, nvcc_threads,
                                    on_event, launch, toolchain_lock=toolchain_lock)
        stats = read_stats(env.environ, stats_log, ccache) if launch else None
        units = unit_times(workdir / "cmake-build", since, manifest.root.resolve())
        key = cache.key(plan.variant, env.toolchain_id) if cache is not None else None
        meta = variant_metadata(manifest, env, plan, state, cache_key=key)
        sealed = lay_out_variant(manifest, plan, library, meta, dest)
        if cache is not None and key is not None:
            cache.record(plan.variant, key, units)
        return BuildResult(plan.variant, dest, log_path, sealed, time.monotonic() - started, units,
                           stats)


def _configure_args(env: BuildEnvironment, plan: VariantPlan, project: Path, workdir: Path,
                    tools: Tools) -> list[str]:
    defines = {
        "CMAKE_BUILD_TYPE": "Release",
        "CMAKE_MAKE_PROGRAM": str(tools.ninja),
        "Python3_EXECUTABLE": str(env.python),
        "KK_SOURCE_ROOT": str(project),
        "KK_OUTPUT_DIR": str(workdir / "out"),
        **plan.cmake_defines(),
    }
    if env.toolkit is not None and plan.backend == "cuda":
        defines["CMAKE_CUDA_COMPILER"] = str(env.toolkit.nvcc)
        defines["CUDAToolkit_ROOT"] = str(env.toolkit.root)
    if env.torch.info:  # the probe's answer: CMake need not import torch again
        info = workdir / "torch_info.json"
        text = json.dumps(env.torch.info, indent=1, sort_keys=True)
        if _read(info) != text:
            atomic_write_text(info, text)
        defines["KK_TORCH_INFO"] = str(info)
    return [str(tools.cmake), "-S", str(workdir / "src"), "-B", str(workdir / "cmake-build"),
            "-G", "Ninja", *(f"-D{k}={v}" for k, v in defines.items())]


def compile_extension(manifest: Manifest, env: BuildEnvironment, plan: VariantPlan,
                      workdir: Path, log_path: Path, jobs: int, nvcc_threads: int = 1,
                      on_event: OnEvent = ignore_event,
                      launch: Mapping[str, str] | None = None, *,
                      toolchain_lock: ToolchainLock | None = None) -> Path:
    """Configure and build the generated project; return the extension module."""
    tools = Tools.find()
    configure = _configure_args(env, plan, manifest.root.resolve(), workdir, tools)
    deps = dependency_defines(manifest, plan.backend, toolchain_lock,
                              python=env.python, environ=env.environ)
    configure += [f"-D{k}={v}" for k, v in deps.items()]
    build = [str(tools.cmake), "--build", str(workdir / "cmake-build"), "--verbose",
             "-j", str(jobs)]
    environ = {**env.environ, **(launch or {}), "NINJA_STATUS": "[%f/%t] "}
    if plan.backend == "cuda" and nvcc_threads > 1:  # nvcc compiles the archs in parallel
        environ.setdefault("NVCC_THREADS", str(nvcc_threads))  # the user's own setting wins
    progress = NinjaProgress()

    def on_line(line: str) -> None:
        step = progress.feed(line)
        if step is not None:
            on_event(BuildEvent("progress", plan.variant, step.what, step=step))

    steps = [("configure (cmake)", configure), ("compile (ninja)", build)]
    build_dir = workdir / "cmake-build"
    stamp = build_dir / ".kernelkit-configured"
    configured = _configure_fingerprint(configure, environ, env)
    kept = configure_cache_dir(env.environ)
    tool_paths = _tool_paths(tools, env, environ) if kept is not None else []
    key = configure_key(configured, workdir / "src", build_dir,
                        tool_paths) if kept is not None else ""
    if _read(stamp) == configured and (build_dir / "build.ninja").is_file():
        steps = steps[1:]  # configured alike before: ninja reruns CMake itself if inputs changed
    elif kept is not None and restore(kept, key, build_dir):
        steps = steps[1:]  # the same configure was kept from an earlier build in this place
    else:
        stamp.unlink(missing_ok=True)
    # CMake's configure-time probes (try_compile scratch projects) go through the launcher too;
    # the hits and misses reported are the build's units alone. The GPUs are hidden from the
    # configure: CMake's CUDA ABI probe would open them to list their architectures, which
    # kernelkit never uses (it names the architectures), 0.2 s on the H200
    # (benchmarks/results/configure_cuda.json).
    configure_env = {**environ, "CCACHE_STATSLOG": str(workdir / "ccache-configure-stats.log"),
                     "CUDA_VISIBLE_DEVICES": ""}
    ids = None  # (configure cache, identification key), only when a configure runs
    if kept is not None and steps[0][1] is configure:
        ids = (kept, compiler_id_cache.identification_key(configure, environ, tool_paths))
    for step, cmd in steps:
        try:
            if cmd is configure:
                _configure(cmd, build_dir, ids, log_path=log_path, what=step, env=configure_env)
            else:
                progress.started = time.monotonic()
                run(cmd, log_path=log_path, what=step, env=environ, on_line=on_line)
        except CommandError as exc:
            errors = compiler_errors(exc, log_path, project=manifest.root.resolve(),
                                     generated=workdir / "src", cwd=build_dir)
            raise BuildError(plan.variant, f"{step} failed\n{errors}",
                             log_path=log_path) from None
        if cmd is configure and kept is not None:
            store(kept, key, build_dir)
    atomic_write_text(stamp, configured)
    built = built_module_name(manifest, plan)
    found = sorted((workdir / "out").glob(f"{built}.*"))
    if not found:
        raise BuildError(plan.variant, f"the build produced no {built} module",
                         log_path=log_path)
    return found[0]


def built_module_name(manifest: Manifest, plan: VariantPlan) -> str:
    """The name CMake gives the module: a ``[torch]`` extension's target has no build id
    (``generate.ids.target_name``; it is laid out as ``<ops_name>.abi3.so``), a tvm-ffi
    library is named after its op namespace."""
    if isinstance(manifest.framework, TvmFfi):
        return plan.ops_name
    return target_name(manifest.general.python_name, plan.backend)


def _configure(cmd: list[str], build_dir: Path, ids: tuple[Path, str] | None, *,
               log_path: Path, what: str, env: Mapping[str, str]) -> None:
    """Run CMake's configure; a new build directory first gets the compiler identification kept
    for this toolchain (``ids``: the configure cache and the identification key), and one
    CMake cannot use is dropped and the configure repeated without it. Raises
    :class:`CommandError` when the configure fails."""
    seeded = ids is not None and compiler_id_cache.seed(*ids, build_dir)
    try:
        run([*cmd, compiler_id_cache.SEED_DEFINE] if seeded else cmd, log_path=log_path,
            what=what, env=env)
    except CommandError:
        if ids is None or not seeded:
            raise
        compiler_id_cache.drop(*ids, build_dir)
        run(cmd, log_path=log_path, what=what, env=env)
    if ids is not None:
        compiler_id_cache.keep(*ids, build_dir)


def _tool_paths(tools: Tools, env: BuildEnvironment,
                environ: Mapping[str, str]) -> list[Path | None]:
    """The programs a configure identifies: cmake, ninja, the C/C++ compilers, nvcc."""
    def which(var: Text, name: str) -> Path | None:
        found = var.read(environ) or shutil.which(name, path=PATH.raw(environ))
        return Path(found) if found else None

    nvcc = env.toolkit.nvcc if env.toolkit is not None else None
    return [tools.cmake, tools.ninja, which(CC, "cc"), which(CXX, "c++"), nvcc]


def _configure_fingerprint(configure: list[str], environ: Mapping[str, str],
                           env: BuildEnvironment) -> str:
    """What a configure depends on beyond the generated sources: its arguments, the compiler
    variables CMake reads only then (launchers, CC/CXX/CUDAHOSTCXX), the torch it describes and
    the CUDA toolkit. Equal fingerprints let a rebuild skip straight to ninja."""
    keys = sorted(k for k in environ if k.endswith("_COMPILER_LAUNCHER")
                  or k in ("CC", "CXX", "CUDAHOSTCXX", "CUDAFLAGS", "CXXFLAGS", "CFLAGS",
                           "NVCC_THREADS"))
    parts = [*configure, *(f"{k}={environ[k]}" for k in keys), env.torch.torch_version,
             str(env.torch.torch_dir), env.toolkit.version if env.toolkit else "",
             json.dumps(env.torch.info, sort_keys=True)]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def _forget_moved_tree(build_dir: Path) -> None:
    """A CMake tree made at another path (the project was copied or moved) cannot be reused:
    CMake refuses its cache. Start that tree afresh (ccache still has every object)."""
    cache = _read(build_dir / "CMakeCache.txt")
    if cache is None:
        return
    made_in = next((line.split("=", 1)[1] for line in cache.splitlines()
                    if line.startswith("CMAKE_CACHEFILE_DIR:")), None)
    if made_in is not None and Path(made_in) != build_dir:
        shutil.rmtree(build_dir, ignore_errors=True)


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return None


def compiler_errors(exc: CommandError, log_path: Path, max_lines: int = 60,
                    width: int = 240, *, project: Path | None = None,
                    generated: Path | None = None, cwd: Path | None = None) -> str:
    """The compiler's error from the log: the diagnostics, those in the project's own files
    first (``builder/compile/diagnostics.py``); without any, from ninja's last ``FAILED:``
    line (else the output tail), with over-long lines (full compiler command lines) shortened."""
    text = log_path.read_text("utf-8", "replace") if log_path.is_file() else ""
    found = first_errors(text, project, generated=generated, cwd=cwd)
    if found:
        return "\n".join(ln if len(ln) <= width else ln[:width] + " ..." for ln in found)
    start = text.rfind("FAILED:")
    lines = text[start:].splitlines()[:max_lines] if start >= 0 else exc.output_tail.splitlines()
    return "\n".join(ln if len(ln) <= width else ln[:width] + " ..." for ln in lines)


def variant_metadata(manifest: Manifest, env: BuildEnvironment, plan: VariantPlan,
                     state: GitState | None, *, cache_key: str | None = None) -> Metadata:
    g = manifest.general
    extra: dict[str, object] = {"torch": env.torch.torch_version,
                                "python": env.torch.python_version,
                                "cxx-standard": plan.cxx_standard,
                                "sources": sources_record(manifest, state)}
    if env.toolkit is not None and plan.backend == "cuda":
        extra["cuda-toolkit"] = env.toolkit.version
    if isinstance(manifest.framework, TvmFfi):
        extra["tvm-ffi"] = env.torch.tvm_ffi
    if plan.stable_abi is not None:
        extra["torch-stable-abi"] = plan.stable_abi
    if cache_key is not None:
        extra["build-cache-key"] = cache_key
    if env.lock_digest is not None:
        extra["toolchain-lock"] = env.lock_digest
    flags = compile_flags(manifest, plan.backend)
    if flags:
        extra["compile-flags"] = flags
    return Metadata(
        name=g.name, id=plan.ops_name, version=g.version, license=g.license,
        backend=plan.backend, archs=plan.archs, upstream=g.upstream, source=g.source,
        python_depends=python_depends_for(g, plan.backend),
        kernel_depends=tuple(kernel_dependency(d) for d in all_kernel_depends(g)),
        provenance=Provenance(builder_version=f"kernelkit/{__version__}",
                              kernel=kernel_commit(state), extra=extra),
    )


def compile_flags(manifest: Manifest, backend: str) -> dict[str, list[str]]:
    """The manifest's compile flags that reached this backend's build, by field
    (``torch.cxx-flags``, ``kernel.<name>.cuda-flags``), for the provenance."""
    fw = manifest.framework
    out: dict[str, list[str]] = {}
    if isinstance(fw, (TorchFramework, TvmFfi)) and fw.cxx_flags:
        out[f"{fw.kind}.cxx-flags"] = list(fw.cxx_flags)
    for k in sorted(manifest.kernels_for(backend), key=lambda k: k.name):
        for key, flags in (("cxx-flags", k.cxx_flags), ("cuda-flags", k.cuda_flags),
                           ("hip-flags", k.hip_flags), ("sycl-flags", k.sycl_flags)):
            if flags:
                out[f"kernel.{k.name}.{key}"] = list(flags)
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
        py, uid = manifest.general.python_name, plan.unique_id
        ops = (render_tvm_ffi_ops_py(py, uid, plan.backend)
               if isinstance(manifest.framework, TvmFfi) else render_ops_py(py, uid, plan.backend))
        (staging / "_ops.py").write_text(ops, encoding="utf-8")
        built = built_module_name(manifest, plan)
        shutil.copyfile(library, staging / (plan.ops_name + library.name[len(built):]))
        sealed = seal_variant(staging, meta)
        replace_dir(staging, dest)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return sealed
