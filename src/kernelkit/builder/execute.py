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

from kernelkit.builder.compile.events import BuildEvent, OnEvent, Outcome, ignore_event
from kernelkit.builder.plan.plan_matrix import MatrixPlan, PlannedBuild
from kernelkit.errors import NotBuildableError, RefusalKind

BuildOne = Callable[[PlannedBuild, OnEvent], Outcome]


def execute_plan(plan: MatrixPlan, build_one: BuildOne,
                 on_event: OnEvent | None = None) -> list[Outcome]:
    """``build_one`` for every buildable variant; failures become outcomes. Results come back
    in plan order, then one ``skipped`` outcome per variant the plan could not build."""
    emit = on_event or ignore_event

    def one(b: PlannedBuild) -> Outcome:
        emit(BuildEvent("start", b.target.variant, b.reason))
        try:
            out = build_one(b, emit)
        except NotBuildableError as exc:
            hint = f"; {exc.hint}" if exc.hint else ""
            out = refused(b.target.variant, exc.who, f"{exc.what}: {exc.reason}{hint}", exc)
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
