"""Build one planned variant: its environment, the build cache check, the compile with a
persistent CMake tree (``_cmake_build/<variant>``, so ninja reuses objects; ccache when
installed), and the provenance extras (cache key, toolchain lock digest)."""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kernelkit.builder.build_cache import (
    cache_key,
    env_fingerprint,
    read_cache,
    record_cache,
    source_digest,
)
from kernelkit.builder.envs import BuildEnv, EnvSpec, Nvcc, ensure_env, env_spec, existing_env
from kernelkit.builder.toolchain_lock import ToolchainLock, find_lock
from kernelkit.errors import NotBuildableError
from kernelkit.manifest.model import Manifest
from kernelkit.util.paths import default_envs_dir
from kernelkit.variants.matrix import BuildTarget, targets_for

if TYPE_CHECKING:
    from kernelkit.builder.compile import BuildResult
    from kernelkit.builder.matrix_build import MatrixPlan, PlannedBuild

@dataclass(frozen=True)
class Outcome:
    variant: str
    status: str  # "built" | "cached" | "failed" | "skipped"
    message: str = ""
    path: Path | None = None
    log_path: Path | None = None
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {"variant": self.variant, "status": self.status, "message": self.message,
                "path": str(self.path) if self.path else None,
                "log": str(self.log_path) if self.log_path else None,
                "seconds": round(self.seconds, 2)}


@dataclass(frozen=True)
class BuildSettings:
    """Inputs of execution, read at the edge (CLI)."""

    envs_dir: Path
    lock: ToolchainLock | None = None
    update_toolchain: bool = False
    cuda_capabilities: tuple[str, ...] | None = None
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    nvcc: Nvcc | None = None


def ccache_launcher(environ: Mapping[str, str]) -> dict[str, str]:
    """CMake reads ``CMAKE_<LANG>_COMPILER_LAUNCHER`` from the environment: use ccache if
    it is installed."""
    ccache = shutil.which("ccache", path=environ.get("PATH"))
    if not ccache:
        return {}
    return {f"CMAKE_{lang}_COMPILER_LAUNCHER": ccache for lang in ("C", "CXX", "CUDA")}


def host_system() -> str:
    """This machine as a matrix system name (``x86_64-linux``, ``aarch64-darwin``, ...)."""
    import platform

    machine = {"amd64": "x86_64", "arm64": "aarch64"}.get(platform.machine().lower(),
                                                           platform.machine().lower())
    os_name = {"win32": "windows"}.get(sys.platform, "darwin" if sys.platform == "darwin"
                                       else "linux")
    return f"{machine}-{os_name}"


def _spec_for(target: BuildTarget, settings: BuildSettings) -> EnvSpec:
    locked = settings.lock.variants.get(target.variant) if settings.lock else None
    return env_spec(target, locked=locked, system_nvcc=settings.nvcc)


def _toolchain_id(spec: EnvSpec, env_dir: Path | None) -> str:
    lock = spec.locked.digest if spec.locked else "unlocked"
    toolkit = spec.toolkit.reason if spec.toolkit else "no CUDA"
    return f"{lock}|{env_fingerprint(env_dir)}|{toolkit}"


def _cached(b: PlannedBuild, plan: MatrixPlan, key: str) -> bool:
    return (read_cache(plan.out_root).get(b.target.variant) == key
            and (plan.out_root / b.target.variant / "metadata.json").is_file())


def build_target(b: PlannedBuild, plan: MatrixPlan, manifest: Manifest,
                 settings: BuildSettings) -> Outcome:
    """Build one planned variant in its own environment, unless the build cache says it is
    up to date. Raises on failure (``execute_plan`` turns that into an outcome)."""
    t = b.target
    scratch = plan.project / "_cmake_build" / t.variant
    caps = list(settings.cuda_capabilities) if settings.cuda_capabilities and \
        t.backend == "cuda" else None
    sources = source_digest(manifest, t.backend)
    env = None
    if t.kind == "noarch":
        python, environ, toolchain = Path(sys.executable), dict(settings.environ), "noarch"
    else:
        spec = _spec_for(t, settings)
        key = cache_key(sources=sources, toolchain=_toolchain_id(spec, existing_env(
            spec, settings.envs_dir)), capabilities=caps, variant=t.variant)
        if existing_env(spec, settings.envs_dir) and _cached(b, plan, key):
            return Outcome(t.variant, "cached", "up to date", plan.out_root / t.variant)
        env = ensure_env(spec, settings.envs_dir, update=settings.update_toolchain,
                         log_path=scratch / "env.log")
        python, environ = env.python, env.environ(settings.environ)
        toolchain = _toolchain_id(spec, env.path)
    key = cache_key(sources=sources, toolchain=toolchain, capabilities=caps, variant=t.variant)
    if env is None and _cached(b, plan, key):
        return Outcome(t.variant, "cached", "up to date", plan.out_root / t.variant)
    environ.update(ccache_launcher(environ))
    extra = {"build-cache-key": key, "toolchain-lock": env.spec.locked.digest
             if env is not None and env.spec.locked else None}
    result = compile_variant(manifest, python, t.backend, out_root=plan.out_root, scratch=scratch,
                             cuda_capabilities=caps, jobs=plan.jobs, environ=environ,
                             provenance_extra=extra)
    record_cache(plan.out_root, t.variant, key)
    return Outcome(t.variant, "built", "", result.path, result.log_path, result.seconds)


def compile_variant(manifest: Manifest, python: Path, backend: str, *, out_root: Path,
                    scratch: Path, cuda_capabilities: list[str] | None, jobs: int,
                    environ: Mapping[str, str],
                    provenance_extra: Mapping[str, Any]) -> BuildResult:
    """``compile.build_one`` with a persistent CMake build directory (``scratch``, so ninja
    reuses objects across builds) and extra provenance (cache key, toolchain lock digest)."""
    from kernelkit.builder import compile as kc
    from kernelkit.builder.plan import plan_variant
    from kernelkit.builder.probe import probe_python
    from kernelkit.builder.toolkit import find_cuda_toolkit
    from kernelkit.generate import build_files, write_files
    from kernelkit.generate.ids import git_state, unique_id

    tenv = probe_python(python)
    project = manifest.root.resolve()
    state = git_state(project)
    toolkit = find_cuda_toolkit(environ) if backend == "cuda" else None
    vplan = plan_variant(manifest, tenv, backend, unique_id(project, state), toolkit=toolkit,
                         cuda_capabilities=cuda_capabilities)
    scratch.mkdir(parents=True, exist_ok=True)
    # Refresh the generated sources in the persistent tree (unchanged files keep their mtime,
    # so ninja only recompiles what changed); compile_extension then finds them up to date.
    write_files(scratch / "src", build_files(manifest, vplan.unique_id), force=True)
    log_path = scratch / "build.log"
    log_path.write_text("", encoding="utf-8")
    started = time.monotonic()
    library = kc.compile_extension(manifest, tenv, vplan, toolkit, scratch, log_path, jobs,
                                   environ)
    meta = kc.variant_metadata(manifest, tenv, vplan, toolkit, state)
    if meta.provenance is not None:
        extra = {**meta.provenance.extra, **{k: v for k, v in provenance_extra.items() if v}}
        meta = replace(meta, provenance=replace(meta.provenance, extra=extra))
    dest = out_root / vplan.variant
    sealed = kc.lay_out_variant(manifest, vplan, library, meta, dest)
    return kc.BuildResult(vplan.variant, dest, log_path, sealed, time.monotonic() - started)


def env_for_variant(project: Path, variant: str, *, update: bool = False,
                    envs_dir: Path | None = None) -> BuildEnv:
    """The (created if needed) build environment of ``variant`` of the kernel in ``project``."""
    from kernelkit.builder.envs import find_system_nvcc
    from kernelkit.manifest import load_manifest

    manifest = load_manifest(project)
    targets = {t.variant: t for t in targets_for(manifest, system=host_system())}
    if variant not in targets:
        raise VariantNotInMatrixError(variant, sorted(targets))
    settings = BuildSettings(envs_dir or default_envs_dir(), find_lock(manifest.root),
                             update, nvcc=find_system_nvcc())
    spec = _spec_for(targets[variant], settings)
    return ensure_env(spec, settings.envs_dir, update=update,
                      log_path=manifest.root / "_cmake_build" / variant / "env.log")


class VariantNotInMatrixError(NotBuildableError):
    def __init__(self, variant: str, known: list[str]) -> None:
        super().__init__(variant, "the kernel does not build this variant on this machine",
                         hint="one of: " + ", ".join(known) if known else "no variants at all")
