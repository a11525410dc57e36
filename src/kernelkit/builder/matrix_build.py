"""Build many variants: a pure, printable plan, then a thin parallel executor with a build cache.

``plan_matrix`` turns a manifest + facts about this machine into a :class:`MatrixPlan` (one
:class:`PlannedBuild` per variant: buildable or why not, and the command that builds it alone).
``execute_plan`` builds the buildable ones in their own environments (``build.envs``), several
at once (``jobs = cores // parallel`` each), into ``build/<variant>/``; one failure never stops
the others. A variant is skipped when its cache key (sources + toolchain + kernelkit version +
capabilities) equals the one recorded at its last successful build
(``build/.kernelkit-cache.json``).
"""

from __future__ import annotations

import argparse
import fnmatch
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kernelkit.builder.envs import (
    Nvcc,
    choose_cuda_toolkit,
)
from kernelkit.builder.toolchain_lock import find_lock
from kernelkit.builder.variant_build import (
    BuildSettings,
    Outcome,
    VariantNotInMatrixError,
    build_target,
    ccache_launcher,
    compile_variant,
    env_for_variant,
    host_system,
)
from kernelkit.builder.wheel_sources import wheel_available
from kernelkit.errors import NotBuildableError
from kernelkit.manifest.model import Manifest
from kernelkit.util.paths import default_envs_dir
from kernelkit.util.versions import major_minor_text
from kernelkit.variants.matrix import BuildTarget, Matrix, load_matrix, targets_for

__all__ = [  # the one-variant pieces live in variant_build; re-exported for callers
    "BuildSettings", "HostFacts", "MatrixPlan", "Outcome", "PlannedBuild",
    "VariantNotInMatrixError", "add_matrix_arguments", "build_target", "ccache_launcher",
    "compile_variant", "env_for_variant", "execute_plan", "gather_facts", "host_system",
    "plan_matrix", "run_matrix_build", "select", "why_not_buildable",
]

BUILDABLE = ("cpu", "cuda")


# --- facts and plan (pure) ------------------------------------------------------------------


@dataclass(frozen=True)
class HostFacts:
    """What this machine offers, gathered once at the edge (``gather_facts``)."""

    system: str
    cores: int
    nvcc: Nvcc | None = None
    # variant -> where its torch wheel comes from / what pip cannot find for it here.
    sources: Mapping[str, str] = field(default_factory=dict)
    missing: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class PlannedBuild:
    target: BuildTarget
    buildable: bool
    reason: str
    command: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {**self.target.to_json(), "buildable": self.buildable, "reason": self.reason,
                "command": list(self.command)}


@dataclass(frozen=True)
class MatrixPlan:
    project: Path
    out_root: Path
    builds: tuple[PlannedBuild, ...]
    parallel: int
    jobs: int

    @property
    def buildable(self) -> list[PlannedBuild]:
        return [b for b in self.builds if b.buildable]

    def to_json(self) -> dict[str, Any]:
        return {"project": str(self.project), "out-root": str(self.out_root),
                "parallel": self.parallel, "jobs": self.jobs,
                "variants": [b.to_json() for b in self.builds]}

    def render(self) -> str:
        lines = [f"build plan for {self.project} -> {self.out_root} "
                 f"({self.parallel} at once, {self.jobs} jobs each)"]
        for b in self.builds:
            mark = "build" if b.buildable else "skip "
            req = " (required)" if b.target.required else ""
            lines.append(f"  {mark} {b.target.variant}{req}: {b.reason}")
        return "\n".join(lines)


def why_not_buildable(target: BuildTarget, facts: HostFacts,
                      matrix: Matrix | None = None) -> tuple[bool, str]:
    """Can this machine build ``target``, and why (not)?"""
    if target.kind == "tvm-ffi":
        return False, "tvm-ffi kernels are not buildable by kernelkit"
    if target.kind == "noarch":
        return True, "pure Python variant (no compile)"
    if target.backend not in BUILDABLE:
        return False, f"backend {target.backend} is not buildable by kernelkit (cpu and cuda are)"
    if target.system != facts.system:
        return False, f"built on {target.system} machines only (this is {facts.system})"
    how = f"torch {target.pin.torch if target.pin else '?'}"
    if target.backend == "cuda" and target.backend_version:
        try:
            wheels = (matrix or load_matrix()).toolkit_wheels_for(target.backend_version)
            tk = choose_cuda_toolkit(target.backend_version, facts.nvcc, wheels)
        except NotBuildableError as exc:
            return False, exc.reason
        how += f", {tk.reason}"
    if target.variant in facts.missing:
        return False, facts.missing[target.variant]
    source = facts.sources.get(target.variant)
    return True, how + (f" from {source}" if source else "")


def select(targets: Sequence[BuildTarget], patterns: Sequence[str]) -> list[BuildTarget]:
    """Targets whose variant name matches any fnmatch ``patterns`` (all when none given)."""
    if not patterns:
        return list(targets)
    return [t for t in targets if any(fnmatch.fnmatchcase(t.variant, p) for p in patterns)]


def plan_matrix(manifest: Manifest, facts: HostFacts, *, patterns: Sequence[str] = (),
                out_root: Path | None = None, parallel: int | None = None,
                system: str | None = None, matrix: Matrix | None = None) -> MatrixPlan:
    """The build plan: every target of ``manifest`` for ``system`` (default: this machine's)
    matching ``patterns``, each marked buildable here or not (with the reason)."""
    project = manifest.root.resolve()
    out_root = (out_root or project / "build").resolve()
    chosen = select(targets_for(manifest, system=system or facts.system, matrix=matrix), patterns)
    builds = []
    for t in chosen:
        ok, reason = why_not_buildable(t, facts, matrix)
        cmd = ("kernelkit", "build", str(project), "--variant", t.variant)
        builds.append(PlannedBuild(t, ok, reason, cmd))
    n = sum(b.buildable for b in builds)
    par = max(1, min(parallel or facts.cores, n or 1, facts.cores))
    return MatrixPlan(project, out_root, tuple(builds), par, max(1, facts.cores // par))


def gather_facts(targets: Sequence[BuildTarget], *, system: str,
                 environ: Mapping[str, str] | None = None,
                 matrix: Matrix | None = None) -> HostFacts:
    """Look at the machine: cores, the system nvcc, and where each target's wheels come from."""
    from kernelkit.builder.envs import find_system_nvcc

    matrix = matrix or load_matrix()
    nvcc = find_system_nvcc(environ)
    sources: dict[str, str] = {}
    missing: dict[str, str] = {}
    for t in targets:
        if t.pin is None or t.kind in ("noarch", "tvm-ffi") or t.backend not in BUILDABLE:
            continue
        src = wheel_available("torch", t.pin.torch, extra_index=t.pin.index_url)
        if src is None:
            missing[t.variant] = _unavailable(t.pin.requirement, t.pin.index_url)
            continue
        sources[t.variant] = src
        cuda = t.backend_version if t.backend == "cuda" else None
        if cuda and not (nvcc and major_minor_text(nvcc.version) == major_minor_text(cuda)):
            tw = matrix.toolkit_wheels_for(cuda)
            if tw is None or not wheel_available(tw.packages[0], f"{major_minor_text(cuda)}.*",
                                                 extra_index=t.pin.index_url):
                have = f"system nvcc is {nvcc.version}" if nvcc else "no system nvcc"
                missing[t.variant] = (f"needs CUDA {major_minor_text(cuda)}: {have} and "
                                      f"{_unavailable('the toolkit wheels', t.pin.index_url)}")
    return HostFacts(system, os.cpu_count() or 1, nvcc, sources, missing)


def _unavailable(what: str, index: str | None) -> str:
    from kernelkit.builder.toolchain_lock import index_reachable

    text = f"{what} not available from pip's configured sources"
    if index is None:
        return text
    return text + (f" nor {index}" if index_reachable(index) else
                   f" and {index} is unreachable (offline?)")



# --- execution ------------------------------------------------------------------------------


def execute_plan(plan: MatrixPlan, manifest: Manifest, settings: BuildSettings,
                 build_one: Callable[[PlannedBuild, MatrixPlan, Manifest, BuildSettings], Outcome],
                 on_done: Callable[[Outcome], None] | None = None) -> list[Outcome]:
    """Run ``build_one`` for every buildable variant, ``plan.parallel`` at a time; failures
    become outcomes, never exceptions. Results come back in plan order."""
    todo = plan.buildable

    def one(b: PlannedBuild) -> Outcome:
        try:
            out = build_one(b, plan, manifest, settings)
        except Exception as exc:  # one variant's failure must not stop the others
            out = Outcome(b.target.variant, "failed", str(exc),
                          log_path=getattr(exc, "log_path", None))
        if on_done is not None:
            on_done(out)
        return out

    with ThreadPoolExecutor(max_workers=plan.parallel) as pool:
        results = list(pool.map(one, todo))
    skipped = [Outcome(b.target.variant, "skipped", b.reason)
               for b in plan.builds if not b.buildable]
    return results + skipped


# --- command line (hooked into `kernelkit build`) ------------------------------------------


def add_matrix_arguments(parser: argparse.ArgumentParser) -> None:
    """``kernelkit build --all | --variant PATTERN [--dry-run] [--json] ...``."""
    g = parser.add_argument_group("build matrix (each variant in its own pinned environment)")
    g.add_argument("--all", dest="matrix_all", action="store_true",
                   help="build every variant of the supported matrix this machine can build")
    g.add_argument("--variant", dest="matrix_variants", action="append", default=[],
                   metavar="PATTERN", help="build the variants matching this fnmatch pattern "
                   "(repeatable), e.g. 'torch213-*'")
    g.add_argument("--dry-run", dest="matrix_dry_run", action="store_true",
                   help="print the plan, build nothing")
    g.add_argument("--json", dest="matrix_json", action="store_true",
                   help="print the plan (with --dry-run) or the results as JSON")
    g.add_argument("--parallel", dest="matrix_parallel", type=int, default=None, metavar="N",
                   help="variants built at once (default: as many as cores)")
    g.add_argument("--update-toolchain", dest="update_toolchain", action="store_true",
                   help="reinstall environments that drifted from kernelkit.toolchain.lock")


def run_matrix_build(args: argparse.Namespace) -> int | None:
    """Handle ``--all``/``--variant``; ``None`` when neither was given (single-variant build)."""
    if not (getattr(args, "matrix_all", False) or getattr(args, "matrix_variants", None)):
        return None
    import json

    from kernelkit.builder.compile import cuda_capabilities_from_env
    from kernelkit.builder.envs import find_system_nvcc
    from kernelkit.manifest import load_manifest

    manifest = load_manifest(Path(getattr(args, "kernel_dir", None) or "."))
    here = host_system()
    facts = gather_facts(targets_for(manifest, system=here), system=here)
    out = getattr(args, "out_root", None) or getattr(args, "out", None)
    plan = plan_matrix(manifest, facts, patterns=args.matrix_variants,
                       out_root=Path(out) if out else None, parallel=args.matrix_parallel)
    if not plan.builds:
        raise NotBuildableError(f"--variant {' '.join(args.matrix_variants)}",
                                "no variant of the kernel matches",
                                hint="see `kernelkit list-variants`")
    if args.matrix_dry_run:
        print(json.dumps(plan.to_json(), indent=2) if args.matrix_json else plan.render())
        return 0
    if getattr(args, "jobs", None):
        plan = replace(plan, jobs=args.jobs)
    caps = _capabilities(args) or cuda_capabilities_from_env(os.environ)
    settings = BuildSettings(default_envs_dir(), find_lock(manifest.root), args.update_toolchain,
                             tuple(caps) if caps else None, dict(os.environ), find_system_nvcc())
    if not args.matrix_json:
        print(plan.render(), file=sys.stderr)
    outcomes = execute_plan(plan, manifest, settings, build_target,
                            on_done=None if args.matrix_json else _report_one)
    return _summarize(outcomes, args.matrix_json)


def _capabilities(args: argparse.Namespace) -> list[str] | None:
    text = getattr(args, "cuda_capabilities", None)
    if not text:
        return None
    from kernelkit.generate.cuda_archs import parse_capabilities

    return list(parse_capabilities(text))


def _report_one(o: Outcome) -> None:
    print(f"{o.status:>7} {o.variant}" + (f" ({o.seconds:.0f} s)" if o.seconds else "")
          + (f": {o.message.splitlines()[0]}" if o.status == "failed" else ""), file=sys.stderr)


def _summarize(outcomes: list[Outcome], as_json: bool) -> int:
    failed = [o for o in outcomes if o.status == "failed"]
    if as_json:
        import json

        print(json.dumps([o.to_json() for o in outcomes], indent=2))
    else:
        counts = {s: sum(o.status == s for o in outcomes)
                  for s in ("built", "cached", "failed", "skipped")}
        print(", ".join(f"{n} {s}" for s, n in counts.items()))
        for o in failed:
            print(f"FAILED {o.variant}: {o.message}" + (f"\n  log: {o.log_path}"
                                                       if o.log_path else ""))
    return 1 if failed or not any(o.status in ("built", "cached") for o in outcomes) else 0
