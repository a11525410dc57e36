"""Plan many variants (pure): which variants to build, each buildable here or not (and why).

A :class:`MatrixPlan` is a value you can print (``--dry-run``), serialise (``--json``) and test:
one :class:`PlannedBuild` per variant with the environment it is built in (``python`` set: that
interpreter; unset: the variant's pinned environment) and the command that builds it alone. A
variant that cannot be built says why and whose limitation that is (``who``: kernelkit does not
support it yet, this machine lacks something, or the project is wrong), decided in one place:
:func:`why_not_buildable` (:func:`kernelkit_refusal` for what kernelkit cannot build yet).
``plan_matrix`` plans the supported matrix of a manifest; ``plan_interpreter`` plans a plain
``kernelkit build``: the backends one torch environment supports, a one-environment plan.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kernelkit.builder.plan.project_check import package_problem
from kernelkit.builder.plan.resources import Fit, Machine, fit
from kernelkit.builder.plan.variant_plan import check_torch_bounds, plan_cuda_archs, variant_name
from kernelkit.builder.toolchain.probe import TorchEnv
from kernelkit.builder.toolchain.toolkit import CudaToolkit, choose_cuda_toolkit
from kernelkit.errors import WHOSE, KernelkitError, NotBuildableError, RefusalKind
from kernelkit.generate.cuda_archs import default_capabilities
from kernelkit.manifest.model import Manifest
from kernelkit.variants.matrix import (
    BuildTarget,
    Matrix,
    TargetKind,
    load_matrix,
    target_kind,
    targets_for,
)

BUILDABLE = ("cpu", "cuda")


@dataclass(frozen=True)
class HostFacts:
    """What this machine offers, gathered once at the edge (``builder.plan.facts.gather_facts``)."""

    system: str
    cores: int
    toolkit: CudaToolkit | None = None
    memory_available: int = 1 << 40  # bytes; unknown: plenty
    # variant -> where its torch wheel comes from / what pip cannot find for it here.
    sources: Mapping[str, str] = field(default_factory=dict)
    missing: Mapping[str, str] = field(default_factory=dict)
    # what a compiled variant lacks here (cmake, ninja, a C/C++ compiler), with what to do
    tools_problem: str | None = None


@dataclass(frozen=True)
class Verdict:
    """Whether a target can be built here and why (not); a refusal says whose limitation it is."""

    buildable: bool
    reason: str
    who: RefusalKind | None = None  # None when buildable

    @classmethod
    def refuse(cls, who: RefusalKind, reason: str) -> Verdict:
        return cls(False, reason, who)


@dataclass(frozen=True)
class PlannedBuild:
    target: BuildTarget
    buildable: bool
    reason: str
    command: tuple[str, ...]
    python: Path | None = None  # build with this interpreter; None: the pinned environment
    who: RefusalKind | None = None  # whose limitation a refusal is (None when buildable)

    @property
    def explanation(self) -> str:
        """The reason, prefixed with whose limitation it is when the variant is refused."""
        return f"{WHOSE[self.who]}: {self.reason}" if self.who else self.reason

    def to_json(self) -> dict[str, Any]:
        return {**self.target.to_json(), "buildable": self.buildable, "reason": self.reason,
                "who": self.who, "command": list(self.command),
                "python": str(self.python) if self.python else None}


@dataclass(frozen=True)
class MatrixPlan:
    project: Path
    out_root: Path
    builds: tuple[PlannedBuild, ...]
    parallel: int
    jobs: int
    toolkit: CudaToolkit | None = None  # the system CUDA toolkit, where there is one
    nvcc_threads: int = 1  # nvcc --threads for each CUDA unit
    torch: TorchEnv | None = None  # a one-environment plan: its torch, probed once

    @property
    def buildable(self) -> list[PlannedBuild]:
        return [b for b in self.builds if b.buildable]

    def to_json(self) -> dict[str, Any]:
        return {"project": str(self.project), "out-root": str(self.out_root),
                "parallel": self.parallel, "jobs": self.jobs, "nvcc-threads": self.nvcc_threads,
                "cuda-toolkit": str(self.toolkit.root) if self.toolkit else None,
                "variants": [b.to_json() for b in self.builds]}

    def render(self) -> str:
        threads = f", nvcc --threads {self.nvcc_threads}" if self.nvcc_threads > 1 else ""
        lines = [(f"build plan for {self.project} -> {self.out_root} "
                 f"({self.parallel} at once, {self.jobs} jobs each{threads})")]
        for b in self.builds:
            mark = "build" if b.buildable else ("error" if b.who == "project" else "skip ")
            req = " (required)" if b.target.required else ""
            lines.append(f"  {mark} {b.target.variant}{req}: {b.explanation}")
        return "\n".join(lines)


NOARCH_REASON = "pure Python variant (no compile)"


def kernelkit_refusal(target: BuildTarget) -> Verdict | None:
    """The variants kernelkit cannot build yet, whatever the machine (``None``: it can). The one
    place that says so: supporting a new kind of variant flips its branch here."""
    if target.kind == "noarch":
        return None
    if target.backend not in BUILDABLE:
        return Verdict.refuse("unsupported", f"compiling {target.backend} kernels (kernelkit "
                              "compiles cpu and cuda)")
    if target.kind == "tvm-ffi" and target.pin is not None and not target.pin.extras:
        return Verdict.refuse("unsupported", "building this tvm-ffi version (kernelkit has no "
                              "apache-tvm-ffi pin for it)")
    return None


def project_refusal(manifest: Manifest, target: BuildTarget,
                    cuda_capabilities: Sequence[str] | None = None) -> Verdict | None:
    """What is wrong with the project for ``target``, found without compiling (``None``:
    nothing): the package directory is missing (``project_check.package_problem``), or a CUDA
    component's declared capabilities leave none of the toolkit's, or of
    ``cuda_capabilities`` (the user's ``--cuda-capabilities``: the ones the build compiles, so
    the plan, ``--dry-run`` and the build agree). ``check-config`` reports the same
    (``project_check.project_problems``) for the toolkits' lists."""
    missing = package_problem(manifest)
    if missing is not None:
        return Verdict.refuse("project", missing)
    cuda = target.backend_version
    if target.backend != "cuda" or target.kind == "noarch" or not cuda:
        return None
    try:
        targets = list(cuda_capabilities) if cuda_capabilities else default_capabilities(cuda)
        plan_cuda_archs(manifest, targets, cuda, target.variant)
    except NotBuildableError as exc:
        return Verdict.refuse(exc.who, exc.reason)
    return None


def why_not_buildable(target: BuildTarget, facts: HostFacts,
                      matrix: Matrix | None = None) -> Verdict:
    """Can this machine build ``target``, why (not), and whose limitation a refusal is?"""
    if target.kind == "noarch":
        return Verdict(True, NOARCH_REASON)
    refused = kernelkit_refusal(target)
    if refused is not None:
        return refused
    if target.system != facts.system:
        return Verdict.refuse("machine", f"built on {target.system} machines only (this is "
                              f"{facts.system})")
    if facts.tools_problem:
        return Verdict.refuse("machine", facts.tools_problem)
    how = f"torch {target.pin.torch if target.pin else '?'}"
    if target.backend == "cuda" and target.backend_version:
        try:
            wheels = (matrix or load_matrix()).toolkit_wheels_for(target.backend_version)
            tk = choose_cuda_toolkit(target.backend_version, facts.toolkit, wheels)
        except NotBuildableError as exc:
            return Verdict.refuse(exc.who, exc.reason)
        how += f", {tk.reason}"
    if target.variant in facts.missing:
        return Verdict.refuse("machine", facts.missing[target.variant])
    source = facts.sources.get(target.variant)
    return Verdict(True, how + (f" from {source}" if source else ""))


def select_targets(targets: Sequence[BuildTarget], patterns: Sequence[str]) -> list[BuildTarget]:
    """Targets whose variant name matches any fnmatch ``patterns`` (all when none given)."""
    if not patterns:
        return list(targets)
    return [t for t in targets if any(fnmatch.fnmatchcase(t.variant, p) for p in patterns)]


def _fit(manifest: Manifest, facts: HostFacts, builds: Sequence[PlannedBuild],
         parallel: int | None, jobs: int | None, nvcc_threads: int | None,
         cuda_archs: int) -> Fit:
    cuda = any(b.buildable and b.target.backend == "cuda" for b in builds)
    units = sum(1 for k in manifest.kernels_for("cuda") for s in k.src if s.endswith(".cu"))
    return fit(Machine(facts.cores, facts.memory_available),
               variants=sum(b.buildable for b in builds), cuda_units=units if cuda else 0,
               cuda_archs=cuda_archs, parallel=parallel, jobs=jobs, nvcc_threads=nvcc_threads)


def plan_matrix(manifest: Manifest, facts: HostFacts, *, patterns: Sequence[str] = (),
                out_root: Path | None = None, parallel: int | None = None,
                jobs: int | None = None, nvcc_threads: int | None = None,
                cuda_archs: int = 10, system: str | None = None,
                shard: tuple[int, int] | None = None,
                matrix: Matrix | None = None,
                cuda_capabilities: Sequence[str] | None = None) -> MatrixPlan:
    """The build plan: every target of ``manifest`` for ``system`` (default: this machine's)
    matching ``patterns`` (and in slice ``shard=(k, n)``), each marked buildable here or not
    (with the reason); parallelism fitted to the machine and the buildable variants."""
    project = manifest.root.resolve()
    out_root = (out_root or project / "build").resolve()
    chosen = select_targets(targets_for(manifest, system=system or facts.system, matrix=matrix),
                            patterns)
    if shard is not None:
        chosen = shard_targets(chosen, *shard)
    builds = []
    for t in chosen:
        v = project_refusal(manifest, t, cuda_capabilities) or why_not_buildable(t, facts,
                                                                                  matrix)
        cmd = ("kernelkit", "build", str(project), "--variant", t.variant)
        builds.append(PlannedBuild(t, v.buildable, v.reason, cmd, who=v.who))
    f = _fit(manifest, facts, builds, parallel, jobs, nvcc_threads, cuda_archs)
    return MatrixPlan(project, out_root, tuple(builds), f.parallel, f.jobs, facts.toolkit,
                      f.nvcc_threads)


def interpreter_backends(manifest: Manifest, torch: TorchEnv,
                         requested: Sequence[str] | None) -> list[str]:
    """The backends a plain build makes: ``requested`` (each must be in the manifest), else every
    backend of the manifest that ``torch`` supports (CUDA torch: cuda and cpu; CPU torch: cpu)
    and every noarch variant the matrix has for this system (nothing to compile, so any torch
    will do; ``list-variants`` lists the same ones), plus the noarch backends the matrix has for
    no system at all: as upstream, ``torch-neuron`` is made by local builds only."""
    if requested:
        return list(dict.fromkeys(requested))
    matrix = load_matrix()
    noarch = {t.backend for t in targets_for(manifest, system=f"{torch.machine}-{torch.os}",
                                             matrix=matrix) if t.kind == "noarch"}
    in_matrix = {e.backend for e in matrix.entries}
    chosen = [b for b in manifest.general.backends
              if (b in torch.backends and target_kind(manifest, b) != "noarch") or b in noarch
              or (target_kind(manifest, b) == "noarch" and b not in in_matrix)]
    if not chosen:
        raise NotBuildableError(
            f"{manifest.path or 'build.toml'}",
            f"general.backends ({', '.join(manifest.general.backends)}) has none of the backends "
            "that "
            f"torch {torch.torch_version} of {torch.python} supports ({', '.join(torch.backends)})",
            hint="pass --python with an environment whose torch supports one of them")
    return chosen


def interpreter_target(manifest: Manifest, torch: TorchEnv, backend: str) -> BuildTarget:
    """The variant a plain build of ``backend`` makes with ``torch``."""
    kind: TargetKind = target_kind(manifest, backend)
    system = f"{torch.machine}-{torch.os}"
    cuda = torch.cuda if backend == "cuda" else None
    fields: dict[str, Any] = {"torch": torch.torch_release, "backend": backend,
                              "backend_version": cuda, "required": False, "system": system,
                              "kind": kind}
    if kind == "noarch":
        return BuildTarget(variant=f"torch-{backend}", **fields)
    if backend not in torch.backends:  # refused; a name would need the backend's version
        return BuildTarget(variant=f"{backend} backend", **fields)
    return BuildTarget(variant=variant_name(manifest, torch, backend), **fields)


def interpreter_verdict(target: BuildTarget, torch: TorchEnv,
                        facts: HostFacts | None = None) -> Verdict:
    """Can ``torch``'s interpreter build ``target`` (same classification as the matrix)?"""
    if target.kind == "noarch":
        return Verdict(True, NOARCH_REASON)
    refused = kernelkit_refusal(target)
    if refused is not None:
        return refused
    if target.backend not in torch.backends:
        return Verdict.refuse("machine", f"torch {torch.torch_version} of {torch.python} has no "
                              f"{target.backend} support")
    if facts is not None and facts.tools_problem:
        return Verdict.refuse("machine", facts.tools_problem)
    if facts is not None and target.backend == "cuda" and facts.toolkit is None:
        return Verdict.refuse("machine", f"no CUDA toolkit (nvcc) found; install CUDA "
                              f"{torch.cuda} (torch's) and set CUDA_HOME or put its nvcc on "
                              "PATH")
    return Verdict(True, f"torch {torch.torch_version} of {torch.python}")


def torch_bounds_refusal(manifest: Manifest, torch: TorchEnv,
                         target: BuildTarget) -> Verdict | None:
    """A plain build whose torch is outside ``[torch] minver/maxver``: which torch to install,
    and which variants ``--all`` builds instead (each in its pinned environment)."""
    if target.kind == "noarch":
        return None
    try:
        check_torch_bounds(manifest, torch, target.variant)
    except NotBuildableError as exc:
        system = f"{torch.machine}-{torch.os}"
        matrix = [t.variant for t in targets_for(manifest, system=system)
                  if t.backend == target.backend and t.kind != "noarch"]
        instead = (f"; or build the variants of the supported matrix in pinned environments: "
                   f"kernelkit build --all ({', '.join(matrix)})" if matrix else "")
        return Verdict.refuse("machine", f"{exc.reason}: {exc.hint}{instead}")
    return None


def plan_interpreter(manifest: Manifest, torch: TorchEnv, *, facts: HostFacts,
                     backends: Sequence[str] | None = None, out_root: Path | None = None,
                     jobs: int | None = None, nvcc_threads: int | None = None,
                     cuda_archs: int = 10,
                     cuda_capabilities: Sequence[str] | None = None) -> MatrixPlan:
    """A plain ``kernelkit build``: one variant per backend, all built with ``torch.python``,
    one after the other (each compile uses every core)."""
    project = manifest.root.resolve()
    out_root = (out_root or project / "build").resolve()
    builds = []
    for backend in interpreter_backends(manifest, torch, backends):
        target = interpreter_target(manifest, torch, backend)
        v = (project_refusal(manifest, target, cuda_capabilities)
             or torch_bounds_refusal(manifest, torch, target)
             or interpreter_verdict(target, torch, facts))
        cmd = ("kernelkit", "build", str(project), "--python", str(torch.python),
               "--backend", backend)
        builds.append(PlannedBuild(target, v.buildable, v.reason, cmd, python=torch.python,
                                   who=v.who))
    f = _fit(manifest, facts, builds, 1, jobs, nvcc_threads, cuda_archs)
    return MatrixPlan(project, out_root, tuple(builds), 1, f.jobs, facts.toolkit, f.nvcc_threads,
                      torch)


def shard_targets(targets: Sequence[BuildTarget], index: int,
                  count: int) -> list[BuildTarget]:
    """Slice ``index`` (1-based) of ``count``: the targets sorted by variant name, every
    ``count``-th from the ``index``-th. Deterministic and independent of what this machine can
    build, so ``count`` machines given ``1/count`` ... ``count/count`` build every variant
    exactly once."""
    if not 1 <= index <= count:
        raise KernelkitError(f"--shard {index}/{count}: the shard number must be between 1 and "
                             f"{count}", hint="e.g. --shard 1/4 ... --shard 4/4")
    names = sorted(t.variant for t in targets)
    mine = {name for i, name in enumerate(names) if i % count == index - 1}
    return [t for t in targets if t.variant in mine]
