"""How kernelkit's commands draw downloads (the library only reports ``DownloadStatus`` values,
``kernelkit.loader.progress``): on a terminal, a rich progress bar per variant when rich (from
the ``build`` extra) is installed, else one self-rewriting line (:class:`LineReporter`); not on
a terminal, nothing is drawn and the library's one ``INFO`` record per download remains."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TextIO

from kernelkit.loader.progress import DownloadStatus, format_status, use_progress_reporter

if TYPE_CHECKING:
    from rich.progress import Progress


def stderr_isatty() -> bool:
    """Whether ``sys.stderr`` is a terminal (``False`` when it is missing or closed)."""
    try:
        return sys.stderr is not None and sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


class LineReporter:
    """One line on a terminal, rewritten in place (``\\r``) and ended with a newline at the end."""

    def __init__(self, stream: TextIO, width: int | None = None) -> None:
        self.stream = stream
        self.width = width if width is not None else _columns(stream)
        self._shown = 0

    def __call__(self, status: DownloadStatus) -> None:
        line = format_status(status, self.width)
        pad = " " * max(0, self._shown - len(line))  # blank what a longer line left behind
        self.stream.write(f"\r{line}{pad}" + ("\n" if status.finished else ""))
        self.stream.flush()
        self._shown = 0 if status.finished else len(line)


def _columns(stream: TextIO) -> int:
    """The width of the terminal ``stream`` writes to; ``COLUMNS`` or 80 where it reports none
    (a pseudo-terminal nobody has sized says 0)."""
    try:
        columns = os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError):
        columns = 0
    return columns if columns > 0 else shutil.get_terminal_size().columns


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
def download_progress(*, quiet: bool = False) -> Iterator[None]:
    """Draw the downloads of the ``with`` block on a terminal: rich bars if rich is there,
    else the plain line; not on a terminal or ``quiet``, nothing (the library logs one record
    each)."""
    if quiet or not stderr_isatty():
        yield
        return
    try:
        bars = make_bars()
    except ImportError:  # the `build` extra brings rich; the plain line without it
        with use_progress_reporter(LineReporter(sys.stderr)):
            yield
        return
    with bars, use_progress_reporter(RichReporter(bars)):
        yield
