"""Run a plan: a thin loop that builds the buildable variants, ``plan.parallel`` at a time.

One variant's failure never stops the others: it becomes a ``failed`` :class:`Outcome` (with
the error, so a single-variant caller can raise it). A variant refused (by the plan, or by a
:class:`~kernelkit.errors.NotBuildableError` while it builds) is ``skipped`` with whose
limitation that is (``who``); a refusal because the project is wrong is a failure.
Progress is reported as :class:`BuildEvent` values to an ``on_event`` callback; rendering
them is the CLI's business.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from kernelkit.builder.plan_matrix import MatrixPlan, PlannedBuild
from kernelkit.builder.variant import BuildResult
from kernelkit.errors import WHOSE, NotBuildableError, RefusalKind

Status = Literal["built", "cached", "failed", "skipped"]


@dataclass(frozen=True)
class Outcome:
    variant: str
    status: Status
    message: str = ""
    path: Path | None = None
    log_path: Path | None = None
    seconds: float = 0.0
    error: BaseException | None = field(default=None, compare=False, repr=False)
    result: BuildResult | None = field(default=None, compare=False, repr=False)
    who: RefusalKind | None = None  # a refused variant: whose limitation that is

    @property
    def explanation(self) -> str:
        """The message, prefixed with whose limitation it is for a refused variant."""
        return f"{WHOSE[self.who]}: {self.message}" if self.who else self.message

    def to_json(self) -> dict[str, Any]:
        return {"variant": self.variant, "status": self.status, "message": self.message,
                "who": self.who,
                "path": str(self.path) if self.path else None,
                "log": str(self.log_path) if self.log_path else None,
                "seconds": round(self.seconds, 2)}


@dataclass(frozen=True)
class BuildEvent:
    """Something the user may want to see while a plan runs."""

    kind: Literal["start", "environment", "done"]
    variant: str
    message: str = ""
    outcome: Outcome | None = None


OnEvent = Callable[[BuildEvent], None]
BuildOne = Callable[[PlannedBuild, OnEvent], Outcome]


def _ignore(event: BuildEvent) -> None:
    return None


def execute_plan(plan: MatrixPlan, build_one: BuildOne,
                 on_event: OnEvent | None = None) -> list[Outcome]:
    """``build_one`` for every buildable variant; failures become outcomes. Results come back
    in plan order, then one ``skipped`` outcome per variant the plan could not build."""
    emit = on_event or _ignore

    def one(b: PlannedBuild) -> Outcome:
        emit(BuildEvent("start", b.target.variant, b.reason))
        try:
            out = build_one(b, emit)
        except NotBuildableError as exc:
            out = refused(b.target.variant, exc.who, f"{exc.what}: {exc.reason}", exc)
        except Exception as exc:  # one variant's failure must not stop the others
            out = Outcome(b.target.variant, "failed", str(exc),
                          log_path=getattr(exc, "log_path", None), error=exc)
        emit(BuildEvent("done", b.target.variant, out.message, out))
        return out

    with ThreadPoolExecutor(max_workers=plan.parallel) as pool:
        results = list(pool.map(one, plan.buildable))
    skipped = [refused(b.target.variant, b.who or "machine", b.reason)
               for b in plan.builds if not b.buildable]
    return results + skipped


def refused(variant: str, who: RefusalKind, reason: str,
            error: BaseException | None = None) -> Outcome:
    """A variant that was not built: skipped, or failed when the project is wrong."""
    return Outcome(variant, "failed" if who == "project" else "skipped", reason, error=error,
                   who=who)
