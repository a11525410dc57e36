"""How ``kernelkit download`` shows its downloads: a rich progress bar per variant on a terminal
(when rich, from the ``build`` extra, is installed); otherwise the loader's own default (one
self-rewriting line on a terminal, one log record elsewhere; ``kernelkit.loader.progress``)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from kernelkit.loader.progress import DownloadStatus, stderr_isatty, use_progress_reporter

if TYPE_CHECKING:
    from rich.progress import Progress


class RichReporter:
    """One bar per variant being downloaded: bytes done of total, speed, time left."""

    def __init__(self, bars: Progress) -> None:
        self.bars = bars
        self.tasks: dict[str, Any] = {}

    def __call__(self, status: DownloadStatus) -> None:
        task = self.tasks.get(status.label)
        if task is None:
            task = self.tasks[status.label] = self.bars.add_task(
                status.label, total=status.total_bytes)
        # a git remote's fetch has no total until its last status (None leaves it unknown)
        self.bars.update(task, completed=status.done_bytes, total=status.total_bytes)
        if status.finished:
            del self.tasks[status.label]  # a later download of the same variant gets a new bar
            if status.failed:
                self.bars.update(task, description=f"{status.label} (failed)")


def make_bars(**console: Any) -> Progress:
    """A rich ``Progress`` for downloads on stderr (``console``: ``rich.console.Console``
    arguments, e.g. ``file=`` in tests); ``ImportError`` without rich."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    return Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(),
                    TransferSpeedColumn(), TimeRemainingColumn(),
                    console=Console(stderr=True, **console), transient=False)


@contextmanager
def download_progress() -> Iterator[None]:
    """Rich bars for the downloads of the ``with`` block on a terminal, if rich is there."""
    if not stderr_isatty():
        yield
        return
    try:
        bars = make_bars()
    except ImportError:  # the `build` extra brings rich; the default line without it
        yield
        return
    with bars, use_progress_reporter(RichReporter(bars)):
        yield
