"""Download progress: a watcher that works with every hub backend, as values (no drawing).

While ``hub.fetch`` writes a variant into its staging directory, a daemon thread sums the sizes
of the files under that directory every ``interval_s`` (0.2 s) and hands a
:class:`DownloadStatus` to a *reporter* (any callable taking one). The hub port is not touched:
the watcher only looks at the bytes on disk, so a local git hub, a git remote and the Hugging
Face Hub (whose ``.incomplete`` files grow in the same directory) all show progress alike. When
the fetch ends (or raises) the thread stops and a last status with ``finished=True`` is reported;
the fetch's exception propagates unchanged, and a reporter that raises is switched off (with a
logged warning) instead of breaking the download.

A git remote moves its bytes earlier, in the mirror's ``git fetch``: :class:`FetchReporter`, the
hub's ``fetch_observer``, turns git's own progress into the same statuses, labelled
``<org/name> (git fetch)``, with no byte total until the end.

Who reports is decided in one place, :func:`plan_progress`: ``KERNELKIT_PROGRESS=0`` turns
progress off, variants smaller than ``KERNELKIT_PROGRESS_MIN_BYTES`` (default 16 MiB) report
nothing, a reporter installed with :func:`set_progress_reporter` (or :func:`use_progress_reporter`)
wins, else one ``INFO`` record on the ``kernelkit.download`` logger when the download ends
(:class:`LogReporter`). The library never draws on the terminal: ``kernelkit``'s commands
install a drawing reporter (``kernelkit.cli.render_download``: a self-rewriting line, or rich
bars), and a program can install its own. :func:`format_status` is the one-line description of
a status that both the log record and the drawn line use.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from kernelkit.settings import KERNELKIT_PROGRESS, KERNELKIT_PROGRESS_MIN_BYTES

if TYPE_CHECKING:
    from kernelkit.hub.git_remote import FetchStatus

log = logging.getLogger(__name__)
download_log = logging.getLogger("kernelkit.download")

DEFAULT_MIN_BYTES = KERNELKIT_PROGRESS_MIN_BYTES.number
THREAD_NAME = "kernelkit-download-progress"
_MB = 1_000_000  # sizes are shown in decimal megabytes, as download tools do


@dataclass(frozen=True)
class DownloadStatus:
    """Where one download stands. ``done_bytes`` never decreases between reports of one
    download and never exceeds ``total_bytes``; the last report has ``finished=True`` (and
    ``failed=True`` if the fetch raised).

    ``total_bytes`` is ``None`` while a git remote's fetch runs (git learns the size only as the
    pack arrives; the last report has it, if git showed a byte count at all): ``step`` (what git
    is doing, done, total: ``("receiving objects", 9, 20)``) then gives the fraction."""

    label: str
    done_bytes: int
    total_bytes: int | None
    elapsed_s: float
    finished: bool = False
    failed: bool = False
    step: tuple[str, int, int] | None = None

    @property
    def fraction(self) -> float:
        """Done, from 0.0 to 1.0 (1.0 for an empty download): by bytes, or by git's ``step``
        while the byte total is not known."""
        if self.total_bytes is not None:
            return self.done_bytes / self.total_bytes if self.total_bytes else 1.0
        if self.finished:
            return 1.0
        if self.step is not None and self.step[2]:
            return self.step[1] / self.step[2]
        return 0.0

    @property
    def rate_bps(self) -> float | None:
        """Mean bytes per second so far; ``None`` before any time has passed."""
        return self.done_bytes / self.elapsed_s if self.elapsed_s > 0 else None

    @property
    def eta_s(self) -> float | None:
        """Seconds left at the mean rate so far; ``None`` when finished or not yet known."""
        rate = self.rate_bps
        if self.finished or not rate or self.total_bytes is None:
            return None
        return max(0.0, (self.total_bytes - self.done_bytes) / rate)


Reporter = Callable[[DownloadStatus], None]


class ProgressPlan(NamedTuple):
    """How downloads report: to ``reporter``, when a variant has at least ``min_bytes``."""

    reporter: Reporter
    min_bytes: int = DEFAULT_MIN_BYTES
    interval_s: float = 0.2


# --- who reports ----------------------------------------------------------------------------

_custom_reporter: Reporter | None = None


def set_progress_reporter(reporter: Reporter | None) -> Reporter | None:
    """Send every later download's progress (of this process) to ``reporter`` instead of the
    default line/log reporter; ``None`` restores the default. Returns the previous reporter.
    ``KERNELKIT_PROGRESS=0`` and ``KERNELKIT_PROGRESS_MIN_BYTES`` still apply. The reporter is
    called from the watcher thread (never concurrently for one download) and should be quick."""
    global _custom_reporter
    previous, _custom_reporter = _custom_reporter, reporter
    return previous


def current_progress_reporter() -> Reporter | None:
    """The reporter installed with :func:`set_progress_reporter`, if any."""
    return _custom_reporter


@contextmanager
def use_progress_reporter(reporter: Reporter | None) -> Iterator[None]:
    """:func:`set_progress_reporter` for the ``with`` block; the previous one comes back after."""
    previous = set_progress_reporter(reporter)
    try:
        yield
    finally:
        set_progress_reporter(previous)


def plan_progress(env: Mapping[str, str], *,
                  reporter: Reporter | None = None) -> ProgressPlan | None:
    """The one decision whether and how downloads report progress (``None``: not at all).

    ``KERNELKIT_PROGRESS`` = ``0``/``false``/``no``/``off`` turns it off; otherwise ``reporter``
    if given, else a :class:`LogReporter`. ``KERNELKIT_PROGRESS_MIN_BYTES`` sets the
    threshold."""
    if not KERNELKIT_PROGRESS.read(env):
        return None
    min_bytes = KERNELKIT_PROGRESS_MIN_BYTES.read(env)
    return ProgressPlan(reporter if reporter is not None else LogReporter(), min_bytes)


# --- how it is described -------------------------------------------------------------------


def _mb(n: int) -> str:
    return f"{n / _MB:.1f}"


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def format_status(status: DownloadStatus, width: int | None = None) -> str:
    """One line for ``status``, e.g. ``downloading org/name@abc1234 torch29-cxx11-cpu-x86_64-linux:
    45.2/120.0 MB 38% 12.3 MB/s ~6 s left``; the label is shortened (``…``) to fit ``width``."""
    s = status
    rate = s.rate_bps
    speed = f" ({_mb(int(rate))} MB/s)" if rate is not None else ""
    if s.failed:
        head = "download of "
        of = f"/{_mb(s.total_bytes)}" if s.total_bytes is not None else ""
        tail = f" failed after {_mb(s.done_bytes)}{of} MB"
    elif s.finished:
        head = "downloaded "
        if s.total_bytes is None:  # a git fetch whose size git never showed
            tail = f" in {s.elapsed_s:.1f} s"
        else:
            tail = f": {_mb(s.total_bytes)} MB in {s.elapsed_s:.1f} s{speed}"
    elif s.total_bytes is None:
        head = "downloading "
        tail = f": {_mb(s.done_bytes)} MB"
        if s.step is not None:
            tail += f", {s.step[0]} {s.fraction:.0%} ({s.step[1]}/{s.step[2]})"
    else:
        head = "downloading "
        tail = f": {_mb(s.done_bytes)}/{_mb(s.total_bytes)} MB {s.fraction:.0%}"
        if rate:
            tail += f" {_mb(int(rate))} MB/s"
        eta = s.eta_s
        if eta is not None:
            tail += f" ~{_duration(eta)} left"
    label = s.label
    if width is not None:
        room = width - 1 - len(head) - len(tail)  # the last column would wrap on some terminals
        if len(label) > room:
            label = label[:max(room - 1, 0)] + "…"
    return head + label + tail


class LogReporter:
    """Nothing while it runs (logs stay clean); one ``INFO`` record on ``kernelkit.download``
    when the download ends, with its size and time."""

    def __call__(self, status: DownloadStatus) -> None:
        if status.finished:
            download_log.info("%s", format_status(status))


# --- the watcher ----------------------------------------------------------------------------


def bytes_under(root: Path) -> int:
    """The sizes of the regular files under ``root`` (files vanishing meanwhile are skipped)."""
    total = 0
    pending = [os.fspath(root)]
    while pending:
        try:
            with os.scandir(pending.pop()) as entries:
                for entry in entries:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            pending.append(entry.path)
                        elif entry.is_file(follow_symlinks=False):
                            total += entry.stat(follow_symlinks=False).st_size
                    except OSError:
                        continue
        except OSError:
            continue
    return total


def _handed(reporter: Reporter, status: DownloadStatus) -> bool:
    """Give ``status`` to ``reporter``; ``False``, with a logged warning, when the reporter
    raised (its caller then switches it off instead of breaking the download)."""
    try:
        reporter(status)
    except Exception:
        log.warning("the download progress reporter failed; no more progress for %s",
                    status.label, exc_info=True)
        return False
    return True


class _Watcher:
    def __init__(self, stage: Path, label: str, total: int, plan: ProgressPlan) -> None:
        self.stage, self.label, self.total, self.plan = stage, label, total, plan
        self.start = time.monotonic()
        self.done = 0
        self.broken = False
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, name=THREAD_NAME, daemon=True)

    def _run(self) -> None:
        self._report(self._measure(), finished=False, failed=False)
        while not self.stopping.wait(self.plan.interval_s):
            self._report(self._measure(), finished=False, failed=False)

    def _measure(self) -> int:
        self.done = max(self.done, min(self.total, bytes_under(self.stage)))
        return self.done

    def _report(self, done: int, *, finished: bool, failed: bool) -> None:
        if self.broken:
            return
        status = DownloadStatus(self.label, done, self.total, time.monotonic() - self.start,
                                finished=finished, failed=failed)
        self.broken = not _handed(self.plan.reporter, status)

    def stop(self, *, failed: bool) -> None:
        self.stopping.set()
        self.thread.join()
        done = self._measure() if failed else self.total
        self._report(done, finished=True, failed=failed)


@contextmanager
def watch_download(stage: Path, label: str, total_bytes: int,
                   plan: ProgressPlan) -> Iterator[None]:
    """Report the bytes written under ``stage`` (of ``total_bytes``) while the block runs."""
    watcher = _Watcher(stage, label, total_bytes, plan)
    watcher.thread.start()
    try:
        yield
    except BaseException:
        watcher.stop(failed=True)
        raise
    watcher.stop(failed=False)


# --- a git remote's fetch -------------------------------------------------------------------


@dataclass
class _Fetch:
    """One fetch being followed: the plan taken when it began, whether it is shown yet."""

    plan: ProgressPlan | None
    shown: bool = False
    last: float = 0.0


class FetchReporter:
    """The ``fetch_observer`` of a git remote hub (``kernelkit.hub.git_remote``): its fetch is
    where the bytes cross the network, before any variant's size is known, so the watcher above
    would only see the quick copy out of the mirror.

    ``plans`` is asked for the plan when each fetch begins (``Settings.progress_plan``: the
    reporter current then, e.g. ``kernelkit download``'s rich bars; ``None``: not shown). A fetch
    is shown once it has run for ``delay_s`` (git's progress lines come only while it works) or
    received the plan's ``min_bytes`` (a threshold of 0 shows every fetch that shows progress);
    each status then goes to the plan's reporter as a :class:`DownloadStatus` labelled
    ``<org/name> (git fetch)``, with no byte total until the last (none at all when git showed
    no byte count: a fast local transfer), at most one per ``interval_s`` besides the last,
    which comes whenever the fetch was shown. A reporter that raises is switched off with a
    logged warning, as for the watcher."""

    def __init__(self, plans: Callable[[], ProgressPlan | None], delay_s: float = 1.0) -> None:
        self.plans, self.delay_s = plans, delay_s
        self.broken = False
        self._fetches: dict[str, _Fetch] = {}

    def __call__(self, status: FetchStatus) -> None:
        key = status.repo_id
        fetch = self._fetches.get(key)
        if fetch is None:  # the first status of this repository's fetch
            fetch = self._fetches[key] = _Fetch(self.plans())
        if status.finished:
            del self._fetches[key]
        plan = fetch.plan
        if plan is None or self.broken:
            return
        if not fetch.shown:
            due = (plan.min_bytes == 0 or status.elapsed_s >= self.delay_s
                   or status.received_bytes >= plan.min_bytes)
            if not due:
                return
            fetch.shown = True
        elif not status.finished and time.monotonic() - fetch.last < plan.interval_s:
            return
        fetch.last = time.monotonic()
        out = DownloadStatus(
            f"{status.repo_id} (git fetch)", status.received_bytes,
            status.received_bytes if status.finished and status.received_bytes else None,
            status.elapsed_s, finished=status.finished, failed=status.failed,
            step=(status.phase.lower(), status.done, status.total))
        self.broken = not _handed(plan.reporter, out)
