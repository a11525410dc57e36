"""``kernelkit build --watch``: the author's loop on the terminal. Each round (a build for this
interpreter's torch, then the project's tests against the fresh variant; ``testing/watch.py``)
is printed as one line; a failure adds the errors below it, the author's file and line first."""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path
from typing import TextIO

from kernelkit.builder.compile.events import Outcome
from kernelkit.testing.watch import DevRound, TestResult


def _units(units: tuple[str, ...], outcome: Outcome) -> str:
    """What ninja compiled, and how many of those the compiler cache answered."""
    if not units:
        return "nothing compiled"
    names = ", ".join(units[:3]) + (f" and {len(units) - 3} more" if len(units) > 3 else "")
    stats = outcome.result.compiler_cache if outcome.result is not None else None
    cached = f"; {stats.hits} from the compiler cache" if stats and stats.hits else ""
    return f"compiled {names}{cached}"


def _tests(tests: tuple[TestResult, ...], seconds: float) -> str:
    if not tests:
        return ""
    parts = []
    for t in tests:
        o = t.outcome
        counts = t.summary or o.reason
        if o.status == "failed":
            first = f": {t.first_failure}" if t.first_failure else ""
            parts.append(f"tests FAILED ({counts}){first}")
        elif o.status == "skipped":
            parts.append(f"tests skipped: {o.reason}")
        else:
            parts.append(f"tests {counts}")
    return "; " + "; ".join(parts) + f" in {seconds:.1f} s"


def round_lines(r: DevRound) -> list[str]:
    """One line for the round; a failure's details follow it, indented."""
    head = f"[{time.strftime('%H:%M:%S')}] round {r.number}"
    if r.changed:
        shown = ", ".join(r.changed[:3]) + (" ..." if len(r.changed) > 3 else "")
        head += f" ({shown})"
    if r.error:
        first, *rest = r.error.splitlines()
        return [f"{head}: cannot build: {first}", *(f"    {ln}" for ln in rest)]
    details: list[str] = []
    done = []
    for o in r.builds:
        if o.status in ("built", "cached"):
            done.append(f"{o.status} {o.variant} in {r.build_seconds:.1f} s "
                        f"({_units(r.compiled.get(o.variant, ()), o)})")
        elif o.status == "failed":
            first, *rest = o.explanation.splitlines()
            done.append(f"build FAILED {o.variant}: {rest[0].strip() if rest else first}")
            details += [f"    {ln}" for ln in rest[1:]]
            if o.log_path and not any("log:" in ln for ln in rest):
                details.append(f"    log: {o.log_path}")
        else:
            done.append(f"skipped {o.variant}: {o.explanation}")
    logs = [f"    log: {t.outcome.log_path}" for t in r.tests
            if t.outcome.status == "failed" and t.outcome.log_path]
    return [f"{head}: " + "; ".join(done) + _tests(r.tests, r.test_seconds), *details, *logs]


def watch(args: argparse.Namespace, settings: object, out: TextIO = sys.stdout) -> int:
    """Rounds until Ctrl-C (or ``--watch-rounds``); the status of the last round."""
    from kernelkit.builder.api import BuildSettings
    from kernelkit.errors import ExitCode
    from kernelkit.manifest import load_manifest
    from kernelkit.testing.watch import dev_round, forget_logs, snapshot, wait_for_change

    assert isinstance(settings, BuildSettings)
    project = Path(args.project)
    pytest_args = shlex.split(args.pytest_args or "")
    before = snapshot(load_manifest(project))
    print(f"watching {len(before)} files of {project.resolve()} (Ctrl-C to stop)", file=out,
          flush=True)
    number, last = 1, None
    changed: list[str] = []
    while True:
        if last is not None:
            forget_logs(last)
        last = dev_round(project, number, changed, settings=settings, python=args.python,
                         backends=args.backends, jobs=args.jobs, pytest_args=pytest_args,
                         run_tests=not args.no_tests)
        for line in round_lines(last):
            print(line, file=out, flush=True)
        if args.watch_rounds and number >= args.watch_rounds:
            return ExitCode.OK if last.ok else ExitCode.BUILD
        found = wait_for_change(project, before, poll=args.watch_poll)
        if found is None:  # pragma: no cover - only with a stop callback
            return ExitCode.OK
        changed, before = found
        number += 1
