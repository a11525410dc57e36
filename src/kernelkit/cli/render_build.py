"""How ``kernelkit build`` shows a running build: a progress bar per variant on a terminal
(rich), one plain line per step in a log or CI, nothing with ``--json``; and, at the end, the
slowest translation units (with a hint for a slow one that includes an umbrella header)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from kernelkit.builder.compile.events import BuildEvent, Outcome


def _eta(seconds: float | None) -> str:
    return f", ~{seconds:.0f} s left" if seconds is not None else ""


class PlainRenderer:
    """One line per event: readable in a CI log, greppable, no terminal control codes."""

    def __init__(self, stream: TextIO = sys.stderr) -> None:
        self.stream = stream

    def __call__(self, event: BuildEvent) -> None:
        if event.kind == "start":
            self._say(f"building {event.variant} ...")
        elif event.kind == "environment":
            self._say(f"  {event.variant}: {event.message}")
        elif event.kind == "progress" and event.step is not None:
            s = event.step
            self._say(f"  {event.variant} [{s.done}/{s.total}] {s.what} "
                      f"({s.elapsed:.0f} s{_eta(s.remaining)})")
        elif event.kind == "done" and event.outcome is not None:
            o = event.outcome
            why = o.explanation.splitlines()[0] if o.status in ("failed", "skipped") and \
                o.message else ""
            self._say(f"{o.status:>7} {o.variant}" + (f" ({o.seconds:.0f} s)" if o.seconds else "")
                      + (f": {why}" if why else ""))

    def _say(self, text: str) -> None:
        print(text, file=self.stream, flush=True)

    def close(self) -> None:
        return None


class RichRenderer:
    """A live progress bar per variant (steps done of total, current file, elapsed, ETA)."""

    def __init__(self, **console: Any) -> None:
        """``console``: ``rich.console.Console`` arguments (``file=`` in tests)."""
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.console = Console(stderr=True, **console)
        self.progress = Progress(
            TextColumn("{task.fields[variant]}"), BarColumn(), MofNCompleteColumn(),
            TimeElapsedColumn(), TimeRemainingColumn(), TextColumn("{task.fields[what]}"),
            console=self.console, transient=False)
        self.tasks: dict[str, Any] = {}
        self.progress.start()

    def __call__(self, event: BuildEvent) -> None:
        task = self.tasks.get(event.variant)
        if event.kind == "start":
            self.tasks[event.variant] = self.progress.add_task(
                "", total=None, variant=event.variant, what="starting")
        elif task is None:
            return
        elif event.kind == "environment":
            self.progress.update(task, what=event.message)
        elif event.kind == "progress" and event.step is not None:
            # steps finished of the total: ninja's "[0/1] cmake" (re-running the configure) is
            # 0 of 1, never -1
            step = event.step
            self.progress.update(task, total=step.total,
                                 completed=min(max(step.done, 0), step.total), what=step.what)
        elif event.kind == "done" and event.outcome is not None:
            o = event.outcome
            total = self.progress.tasks[task].total or 1
            self.progress.update(task, total=total, completed=total,
                                 what=o.status + (f": {o.message.splitlines()[0]}"
                                                  if o.status == "failed" and o.message else ""))

    def close(self) -> None:
        self.progress.stop()


def make_renderer(as_json: bool, quiet: bool = False) -> PlainRenderer | RichRenderer | None:
    if as_json or quiet:
        return None
    if sys.stderr.isatty():
        try:
            return RichRenderer()
        except ImportError:  # the `build` extra brings rich; plain lines without it
            pass
    return PlainRenderer()


def report_lines(outcomes: Sequence[Outcome], count: int = 5,
                 project: Path | None = None) -> list[str]:
    """After a build: the compiler cache's hits and misses and the slowest translation units
    of each variant that was compiled; with ``project``, a hint for each slow unit of it that
    includes an umbrella header (``builder/compile/source_cost.py``), once per unit."""
    from kernelkit.builder.compile.source_cost import umbrella_hints

    lines = []
    hinted: set[str] = set()
    for o in outcomes:
        if o.result is None:
            continue
        if o.result.compiler_cache is not None:
            lines.append(f"compiler cache of {o.variant}: {o.result.compiler_cache}")
        if o.result.unit_times:
            top = list(o.result.unit_times.items())[:count]
            lines.append(f"slowest units of {o.variant}: "
                         + ", ".join(f"{unit} {secs:.1f} s" for unit, secs in top))
            if project is not None:
                for unit, hint in umbrella_hints(project, dict(top)):
                    if unit not in hinted:
                        hinted.add(unit)
                        lines.append(f"hint: {hint}")
    return lines
