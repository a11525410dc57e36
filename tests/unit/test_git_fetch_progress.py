"""A git remote's fetch as download progress: git's progress lines parsed, the tracker's
reports, and the loader's ``FetchReporter`` (delay, threshold, throttle, a broken reporter); the
real fetch is in tests/integration/test_hub_git_remote.py."""

from __future__ import annotations

import logging

import pytest

from kernelkit.hub.git_remote import FetchStatus, _FetchTracker, parse_progress
from kernelkit.loader.progress import DownloadStatus, FetchReporter, ProgressPlan, format_status

# what `git fetch --progress` wrote for a 25 MB variant (carriage returns between updates)
GIT_OUTPUT = (
    "remote: Enumerating objects: 3, done.        \n"
    "remote: Counting objects:  33% (1/3)        \rremote: Counting objects: 100% (3/3), done.\n"
    "Receiving objects:  33% (1/3)\rReceiving objects:  66% (2/3), 11.50 MiB | 11.00 MiB/s\r"
    "remote: Total 3 (delta 0), reused 0 (delta 0), pack-reused 0        \n"
    "Receiving objects: 100% (3/3), 23.85 MiB | 76.08 MiB/s, done.\n"
    "From file:///srv/kernels/acme/demo\n"
    " * [new branch]      main       -> main\n")


def lines(text: str) -> list[str]:
    return text.replace("\r", "\n").splitlines()


@pytest.mark.parametrize(("line", "parsed"), [
    ("Receiving objects:  45% (9/20)", ("Receiving objects", 9, 20, None)),
    ("Receiving objects:  66% (2/3), 11.50 MiB | 11.00 MiB/s", ("Receiving objects", 2, 3,
                                                                int(11.5 * 2**20))),
    ("Receiving objects: 100% (3/3), 512 bytes | 512.00 KiB/s, done.",
     ("Receiving objects", 3, 3, 512)),
    ("Unpacking objects: 100% (7/7), 1.25 GiB | 80.00 MiB/s, done.",
     ("Unpacking objects", 7, 7, int(1.25 * 2**30))),
    ("remote: Compressing objects:  66% (2/3)        ", ("Compressing objects", 2, 3, None)),
    ("Resolving deltas: 100% (1/1), done.", ("Resolving deltas", 1, 1, None)),
    ("remote: Total 3 (delta 0), reused 0 (delta 0), pack-reused 0", None),
    (" * [new branch]      main       -> main", None),
    ("fatal: '/srv/x.git' does not appear to be a git repository", None),
])
def test_git_progress_lines_are_parsed(line: str, parsed: object) -> None:
    assert parse_progress(line) == parsed


def test_the_tracker_reports_each_update_and_keeps_what_is_not_progress() -> None:
    seen: list[FetchStatus] = []
    tracker = _FetchTracker("acme/demo", "file:///srv/kernels/acme/demo.git", seen.append)
    for line in lines(GIT_OUTPUT):
        tracker.line(line)
    tracker.end(failed=False)
    assert [(s.phase, s.done, s.total) for s in seen] == [
        ("Counting objects", 1, 3), ("Counting objects", 3, 3), ("Receiving objects", 1, 3),
        ("Receiving objects", 2, 3), ("Receiving objects", 3, 3), ("Receiving objects", 3, 3)]
    assert [s.received_bytes for s in seen] == [0, 0, 0, int(11.5 * 2**20),
                                                int(23.85 * 2**20), int(23.85 * 2**20)]
    assert [s.finished for s in seen] == [False] * 5 + [True]
    assert tracker.other == ["From file:///srv/kernels/acme/demo",
                             " * [new branch]      main       -> main"]


def test_an_up_to_date_fetch_reports_nothing() -> None:
    seen: list[FetchStatus] = []
    tracker = _FetchTracker("acme/demo", "u", seen.append)
    tracker.end(failed=False)
    assert seen == []


def fetch(elapsed: float, received: int = 0, *, finished: bool = False,
          phase: str = "Receiving objects", done: int = 1, total: int = 4) -> FetchStatus:
    return FetchStatus("acme/demo", "u", phase, done, total, received, elapsed,
                       finished=finished)


def test_a_quick_small_fetch_shows_nothing() -> None:
    seen: list[DownloadStatus] = []
    reporter = FetchReporter(lambda: ProgressPlan(seen.append, min_bytes=16 << 20))
    for s in (fetch(0.1, 1 << 20), fetch(0.3, 2 << 20, finished=True, done=4)):
        reporter(s)
    assert seen == []


def test_a_slow_or_big_fetch_is_shown_from_then_on_with_its_size_at_the_end() -> None:
    seen: list[DownloadStatus] = []
    reporter = FetchReporter(lambda: ProgressPlan(seen.append, min_bytes=16 << 20, interval_s=0.0))
    reporter(fetch(0.5, 1 << 20))                       # neither slow nor big yet
    reporter(fetch(1.2, 2 << 20, phase="Compressing objects", done=2))  # running for 1 s
    reporter(fetch(1.5, 20 << 20, done=3))
    reporter(fetch(1.6, 30 << 20, finished=True, done=4))
    assert [s.step for s in seen] == [("compressing objects", 2, 4), ("receiving objects", 3, 4),
                                      ("receiving objects", 4, 4)]
    assert [s.total_bytes for s in seen] == [None, None, 30 << 20]
    assert seen[-1].finished and seen[-1].done_bytes == 30 << 20
    assert {s.label for s in seen} == {"acme/demo (git fetch)"}
    assert seen[1].fraction == 0.75 and seen[1].eta_s is None


def test_a_big_fetch_shows_before_the_delay_and_updates_are_throttled() -> None:
    seen: list[DownloadStatus] = []
    reporter = FetchReporter(lambda: ProgressPlan(seen.append, min_bytes=1 << 20, interval_s=60.0))
    reporter(fetch(0.1, 2 << 20))
    reporter(fetch(0.2, 3 << 20, done=2))  # within the interval: dropped
    reporter(fetch(0.3, 4 << 20, finished=True, done=4))  # the last always comes
    assert [(s.done_bytes, s.finished) for s in seen] == [(2 << 20, False), (4 << 20, True)]


def test_a_slow_fetch_that_showed_no_size_ends_without_one() -> None:
    """A local remote: the server's compressing took long, the receiving too little for git to
    print bytes; the last line then says how long it took, not '0.0 MB'."""
    seen: list[DownloadStatus] = []
    FetchReporter(lambda: ProgressPlan(seen.append))(
        fetch(19.7, 0, finished=True, phase="Compressing objects", done=6, total=6))
    assert seen[-1].total_bytes is None
    assert format_status(seen[-1]) == "downloaded acme/demo (git fetch) in 19.7 s"


def test_the_lines_for_a_fetch_of_unknown_size() -> None:
    running = DownloadStatus("acme/demo (git fetch)", 12_300_000, None, 2.0,
                             step=("receiving objects", 9, 20))
    assert format_status(running) == \
        "downloading acme/demo (git fetch): 12.3 MB, receiving objects 45% (9/20)"
    failed = DownloadStatus("acme/demo (git fetch)", 5_000_000, None, 2.0, finished=True,
                            failed=True)
    assert format_status(failed) == "download of acme/demo (git fetch) failed after 5.0 MB"


def test_a_broken_reporter_is_switched_off(caplog: pytest.LogCaptureFixture) -> None:
    calls: list[DownloadStatus] = []

    def broken(status: DownloadStatus) -> None:
        calls.append(status)
        raise RuntimeError("boom")

    reporter = FetchReporter(lambda: ProgressPlan(broken, min_bytes=0, interval_s=0.0))
    with caplog.at_level(logging.WARNING, logger="kernelkit.loader.progress"):
        reporter(fetch(0.1, 1))
        reporter(fetch(0.2, 2, finished=True))
    assert len(calls) == 1 and "no more progress for acme/demo (git fetch)" in caplog.text


def test_each_fetch_takes_the_plan_current_when_it_begins() -> None:
    """``kernelkit download`` installs its rich reporter after opening the hub: a fetch asks
    for the plan when it begins, keeps it to its end, and progress off (``None``) shows
    nothing."""
    first: list[DownloadStatus] = []
    second: list[DownloadStatus] = []
    current: list[ProgressPlan | None] = [None]
    reporter = FetchReporter(lambda: current[0])
    reporter(fetch(2.0, 1))
    reporter(fetch(2.1, 2, finished=True))
    current[0] = ProgressPlan(first.append, min_bytes=0, interval_s=0.0)
    reporter(fetch(0.1, 1))
    current[0] = ProgressPlan(second.append, min_bytes=0, interval_s=0.0)
    reporter(fetch(0.2, 2, finished=True))  # the same fetch: still the first plan
    reporter(fetch(0.1, 5))                 # a new fetch: the plan current now
    assert [s.done_bytes for s in first] == [1, 2] and first[-1].finished
    assert [s.done_bytes for s in second] == [5]
