"""The author's loop (``kernelkit build --watch``): build, run the project's tests against the
fresh variant, wait for a source to change, again.

One round is :func:`dev_round`: a plain build for one interpreter (the same pipeline as
``kernelkit build``: unchanged units are not recompiled, `docs/authoring.md`), then
``tests/`` against each variant just built that this interpreter can load
(``kernelkit test``'s runner, output to a log). Between rounds :func:`wait_for_change` polls
the files a build reads (``build_cache.source_files``) and ``tests/``: modification time and
size, no watcher library. The CLI renders each round as one line.
"""

from __future__ import annotations

import re
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kernelkit.builder.api import BuildSettings, plan_build, run_plan
from kernelkit.builder.caches.build_cache import source_files
from kernelkit.builder.compile.events import Outcome
from kernelkit.manifest import Manifest, load_manifest
from kernelkit.testing.choose import choose_variant_tests
from kernelkit.testing.run import VariantTestOutcome, run_variant_tests

Snapshot = dict[str, tuple[int, int]]  # relative path -> (mtime_ns, size)

_SUMMARY = re.compile(r"(\d+ (?:passed|failed|skipped|errors?|xfailed|xpassed|deselected|"
                      r"warnings?)(?:, \d+ \w+)*) in ([\d.]+)s")


@dataclass(frozen=True)
class TestResult:
    """One variant's test run in a round: the outcome, pytest's counts, the first failure."""

    outcome: VariantTestOutcome
    summary: str = ""  # "24 passed, 1 skipped"
    first_failure: str = ""  # "tests/test_x.py::test_y - AssertionError: ..."


@dataclass(frozen=True)
class DevRound:
    """What one round did: the build outcomes, then the tests of each variant built."""

    number: int
    changed: tuple[str, ...]
    builds: tuple[Outcome, ...]
    build_seconds: float
    tests: tuple[TestResult, ...] = ()
    test_seconds: float = 0.0
    error: str = ""  # the build could not even be planned (bad build.toml, ...)
    compiled: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # variant -> units

    @property
    def ok(self) -> bool:
        return (not self.error and all(o.status in ("built", "cached") for o in self.builds)
                and all(t.outcome.status != "failed" for t in self.tests))


def snapshot(manifest: Manifest) -> Snapshot:
    """What the loop watches: every file a build reads, and ``tests/``."""
    root = manifest.root.resolve()
    tests = root / "tests"
    files = set(source_files(manifest))
    if tests.is_dir():
        files.update(p for p in tests.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    out: Snapshot = {}
    for path in files:
        try:
            st = path.stat()
        except OSError:
            continue
        out[path.relative_to(root).as_posix()] = (st.st_mtime_ns, st.st_size)
    return out


def changed_files(before: Snapshot, after: Snapshot) -> list[str]:
    """Files added, removed or modified between two snapshots, sorted."""
    return sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))


def wait_for_change(project: Path, before: Snapshot, *, poll: float = 0.3,
                    settle: float = 0.2, stop: Callable[[], bool] = lambda: False
                    ) -> tuple[list[str], Snapshot] | None:
    """Block until a watched file changes (then wait ``settle`` seconds for the editor to
    finish writing); ``(changed files, new snapshot)``, or ``None`` when ``stop()``."""
    while not stop():
        time.sleep(poll)
        try:
            now = snapshot(load_manifest(project))
        except Exception:  # a half-written build.toml: look again on the next poll
            continue
        changed = changed_files(before, now)
        if changed:
            time.sleep(settle)
            final = snapshot(load_manifest(project))
            return changed_files(before, final), final
    return None


def pytest_result(outcome: VariantTestOutcome) -> TestResult:
    """pytest's counts and first failure, read from the run's log."""
    try:
        text = outcome.log_path.read_text("utf-8", "replace") if outcome.log_path else ""
    except OSError:
        text = ""
    found = _SUMMARY.findall(text)
    failure = next((ln.split(" ", 1)[1] for ln in text.splitlines()
                    if ln.startswith(("FAILED ", "ERROR ")) and " " in ln), "")
    return TestResult(outcome, found[-1][0] if found else "", failure)


def dev_round(project: Path, number: int, changed: Sequence[str], *,
              settings: BuildSettings, python: Path | None = None,
              backends: Sequence[str] | None = None, jobs: int | None = None,
              pytest_args: Sequence[str] = (), run_tests: bool = True) -> DevRound:
    """Build ``project`` for ``python``'s torch, then run its tests against each variant
    built; failures are in the value, never raised (except for a programming error)."""
    from kernelkit.errors import KernelkitError

    started = time.monotonic()
    try:
        manifest, plan = plan_build(project, matrix=False, python=python, backends=backends,
                                    jobs=jobs, settings=settings)
        outcomes = run_plan(manifest, plan, settings)
    except KernelkitError as exc:
        return DevRound(number, tuple(changed), (), time.monotonic() - started, error=str(exc))
    build_seconds = time.monotonic() - started
    compiled = {o.variant: tuple(o.result.unit_times) for o in outcomes if o.result}
    built = [o.variant for o in outcomes if o.status == "built"]
    tests: list[TestResult] = []
    started = time.monotonic()
    has_tests = (manifest.root / "tests").is_dir()
    if run_tests and built and has_tests:
        _, targets = choose_variant_tests(project, patterns=built)
        for t in targets:
            result = pytest_result(run_variant_tests(manifest, t, pytest_args,
                                                     environ=settings.environ))
            tests.append(result)
    return DevRound(number, tuple(changed), tuple(outcomes), build_seconds, tuple(tests),
                    time.monotonic() - started if tests else 0.0, compiled=compiled)


def forget_logs(round_: DevRound) -> None:
    """Remove a round's pytest log directories (each run keeps its log in a temp dir)."""
    for t in round_.tests:
        if t.outcome.log_path is not None:
            shutil.rmtree(t.outcome.log_path.parent, ignore_errors=True)
