"""Plan many variants (pure): which variants to build, each buildable here or not (and why).

A :class:`MatrixPlan` is a value you can print (``--dry-run``), serialise (``--json``) and test:
one :class:`PlannedBuild` per variant with the environment it is built in (``python`` set: that
interpreter; unset: the variant's pinned environment) and the command that builds it alone.
``plan_matrix`` plans the supported matrix of a manifest; ``plan_interpreter`` plans a plain
``kernelkit build``: the backends one torch environment supports, a one-environment plan.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kernelkit.builder.plan import interpreter_kind, variant_name
from kernelkit.builder.probe import TorchEnv
from kernelkit.builder.toolkit import CudaToolkit, choose_cuda_toolkit
from kernelkit.errors import NotBuildableError
from kernelkit.manifest.model import Manifest
from kernelkit.variants.matrix import BuildTarget, Matrix, load_matrix, targets_for

BUILDABLE = ("cpu", "cuda")


@dataclass(frozen=True)
class HostFacts:
    """What this machine offers, gathered once at the edge (``builder.facts.gather_facts``)."""

    system: str
    cores: int
    toolkit: CudaToolkit | None = None
    # variant -> where its torch wheel comes from / what pip cannot find for it here.
    sources: Mapping[str, str] = field(default_factory=dict)
    missing: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class PlannedBuild:
    target: BuildTarget
    buildable: bool
    reason: str
    command: tuple[str, ...]
    python: Path | None = None  # build with this interpreter; None: the pinned environment

    def to_json(self) -> dict[str, Any]:
        return {**self.target.to_json(), "buildable": self.buildable, "reason": self.reason,
                "command": list(self.command),
                "python": str(self.python) if self.python else None}


@dataclass(frozen=True)
class MatrixPlan:
    project: Path
    out_root: Path
    builds: tuple[PlannedBuild, ...]
    parallel: int
    jobs: int
    toolkit: CudaToolkit | None = None  # the system CUDA toolkit, where there is one

    @property
    def buildable(self) -> list[PlannedBuild]:
        return [b for b in self.builds if b.buildable]

    def to_json(self) -> dict[str, Any]:
        return {"project": str(self.project), "out-root": str(self.out_root),
                "parallel": self.parallel, "jobs": self.jobs,
                "cuda-toolkit": str(self.toolkit.root) if self.toolkit else None,
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
    if target.kind == "tvm-ffi" and not (target.pin and target.pin.extras):
        return False, "kernelkit has no apache-tvm-ffi pin for this tvm-ffi version"
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
            tk = choose_cuda_toolkit(target.backend_version, facts.toolkit, wheels)
        except NotBuildableError as exc:
            return False, exc.reason
        how += f", {tk.reason}"
    if target.variant in facts.missing:
        return False, facts.missing[target.variant]
    source = facts.sources.get(target.variant)
    return True, how + (f" from {source}" if source else "")


def select_targets(targets: Sequence[BuildTarget], patterns: Sequence[str]) -> list[BuildTarget]:
    """Targets whose variant name matches any fnmatch ``patterns`` (all when none given)."""
    if not patterns:
        return list(targets)
    return [t for t in targets if any(fnmatch.fnmatchcase(t.variant, p) for p in patterns)]


def _parallelism(n_buildable: int, cores: int, parallel: int | None,
                 jobs: int | None) -> tuple[int, int]:
    par = max(1, min(parallel or cores, n_buildable or 1, cores))
    return par, jobs or max(1, cores // par)


def plan_matrix(manifest: Manifest, facts: HostFacts, *, patterns: Sequence[str] = (),
                out_root: Path | None = None, parallel: int | None = None,
                jobs: int | None = None, system: str | None = None,
                matrix: Matrix | None = None) -> MatrixPlan:
    """The build plan: every target of ``manifest`` for ``system`` (default: this machine's)
    matching ``patterns``, each marked buildable here or not (with the reason)."""
    project = manifest.root.resolve()
    out_root = (out_root or project / "build").resolve()
    chosen = select_targets(targets_for(manifest, system=system or facts.system, matrix=matrix),
                            patterns)
    builds = []
    for t in chosen:
        ok, reason = why_not_buildable(t, facts, matrix)
        cmd = ("kernelkit", "build", str(project), "--variant", t.variant)
        builds.append(PlannedBuild(t, ok, reason, cmd))
    par, per_build = _parallelism(sum(b.buildable for b in builds), facts.cores, parallel, jobs)
    return MatrixPlan(project, out_root, tuple(builds), par, per_build, facts.toolkit)


def interpreter_backends(manifest: Manifest, torch: TorchEnv,
                         requested: Sequence[str] | None) -> list[str]:
    """The backends a plain build makes: ``requested`` (each must be in the manifest), else every
    backend of the manifest that ``torch`` supports (CUDA torch: cuda and cpu; CPU torch: cpu)."""
    if requested:
        return list(dict.fromkeys(requested))
    chosen = [b for b in torch.backends if b in manifest.general.backends]
    if not chosen:
        raise NotBuildableError(
            f"{manifest.path or 'build.toml'}",
            f"general.backends {list(manifest.general.backends)} has none of the backends that "
            f"torch {torch.torch_version} of {torch.python} supports ({', '.join(torch.backends)})",
            hint="pass --python with an environment whose torch supports one of them")
    return chosen


def plan_interpreter(manifest: Manifest, torch: TorchEnv, *, cores: int,
                     backends: Sequence[str] | None = None, out_root: Path | None = None,
                     jobs: int | None = None) -> MatrixPlan:
    """A plain ``kernelkit build``: one variant per backend, all built with ``torch.python``,
    one after the other (each compile uses every core)."""
    project = manifest.root.resolve()
    out_root = (out_root or project / "build").resolve()
    builds = []
    for backend in interpreter_backends(manifest, torch, backends):
        cuda = torch.cuda if backend == "cuda" else None
        variant = variant_name(manifest, torch, backend)
        target = BuildTarget(variant=variant, torch=torch.torch_release, backend=backend,
                             backend_version=cuda, required=False,
                             system=f"{torch.machine}-{torch.os}", kind=interpreter_kind(
                                 manifest, backend))
        cmd = ("kernelkit", "build", str(project), "--python", str(torch.python),
               "--backend", backend)
        builds.append(PlannedBuild(target, True, f"torch {torch.torch_version} of {torch.python}",
                                   cmd, python=torch.python))
    return MatrixPlan(project, out_root, tuple(builds), 1, jobs or cores)
