"""Download progress: the status, its one-line rendering, who reports, and the watcher thread
(a real thread polling a real directory that a writer fills; the hub's part is in
tests/integration/test_download_progress.py)."""

from __future__ import annotations

import io
import logging
import threading
import time
from pathlib import Path

import pytest

from kernelkit.cli.render_download import LineReporter
from kernelkit.errors import UsageError
from kernelkit.loader import progress
from kernelkit.loader.progress import (
    DEFAULT_MIN_BYTES,
    THREAD_NAME,
    DownloadStatus,
    LogReporter,
    ProgressPlan,
    bytes_under,
    format_status,
    plan_progress,
    set_progress_reporter,
    use_progress_reporter,
    watch_download,
)

LABEL = "org/name@abc1234 torch214-cxx11-cpu-x86_64-linux"


def status(done: int = 45_200_000, total: int = 120_000_000, elapsed: float = 3.675, *,
           finished: bool = False, failed: bool = False) -> DownloadStatus:
    return DownloadStatus(LABEL, done, total, elapsed, finished=finished, failed=failed)


def watcher_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == THREAD_NAME]


# --- the status and its line ----------------------------------------------------------------


def test_rate_eta_and_fraction_derive_from_the_status() -> None:
    s = status(done=30_000_000, total=120_000_000, elapsed=3.0)
    assert s.fraction == 0.25
    assert s.rate_bps == 10_000_000
    assert s.eta_s == 9.0
    assert status(elapsed=0.0).rate_bps is None and status(elapsed=0.0).eta_s is None
    assert status(finished=True).eta_s is None
    assert DownloadStatus("x", 0, 0, 1.0).fraction == 1.0


def test_the_running_line_shows_size_percentage_speed_and_time_left() -> None:
    assert format_status(status()) == (
        f"downloading {LABEL}: 45.2/120.0 MB 38% 12.3 MB/s ~6 s left")


def test_the_finished_and_failed_lines() -> None:
    assert format_status(status(done=120_000_000, elapsed=9.8, finished=True)) == (
        f"downloaded {LABEL}: 120.0 MB in 9.8 s (12.2 MB/s)")
    assert format_status(status(finished=True, failed=True)) == (
        f"download of {LABEL} failed after 45.2/120.0 MB")


def test_long_times_left_read_in_minutes_and_hours() -> None:
    assert format_status(status(done=1_000_000, elapsed=1.0)).endswith("~2 min left")
    assert format_status(status(done=10_000, elapsed=1.0)).endswith("~3.3 h left")


def test_the_label_is_shortened_to_fit_the_terminal() -> None:
    line = format_status(status(), width=80)
    assert len(line) == 79
    assert line == "downloading org/name@abc1234 torch214-c…: 45.2/120.0 MB 38% 12.3 MB/s ~6 s left"


def test_the_line_reporter_rewrites_one_line_and_ends_it() -> None:
    out = io.StringIO()
    draw = LineReporter(out, width=200)
    draw(status())
    draw(status(done=5_000_000, elapsed=1.0))  # shorter: padded over the longer one
    draw(status(done=120_000_000, finished=True))
    first, second, last = out.getvalue().split("\r")[1:]
    assert first == format_status(status())
    assert second.rstrip(" ") == format_status(status(done=5_000_000, elapsed=1.0))
    assert len(second) >= len(first)
    assert last.endswith("\n") and last.startswith("downloaded ")
    assert out.getvalue().count("\n") == 1


def test_the_log_reporter_logs_once_at_the_end(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="kernelkit.download")
    log = LogReporter()
    log(status())
    assert caplog.records == []
    log(status(done=120_000_000, elapsed=2.0, finished=True))
    [record] = caplog.records
    assert record.name == "kernelkit.download" and record.levelno == logging.INFO
    assert record.getMessage() == f"downloaded {LABEL}: 120.0 MB in 2.0 s (60.0 MB/s)"


# --- who reports ----------------------------------------------------------------------------


def test_the_library_draws_nothing_by_default_it_logs() -> None:
    """Watching is the library's (values), drawing the CLI's (issue 28): with no reporter set,
    a download reports one log record, whether stderr is a terminal or not."""
    import kernelkit.loader.progress as watching

    plan = plan_progress({})
    assert plan is not None and isinstance(plan.reporter, LogReporter)
    assert plan.min_bytes == DEFAULT_MIN_BYTES == 16 * 2**20
    assert not hasattr(watching, "LineReporter") and "sys.stderr" not in Path(
        watching.__file__).read_text()


def test_kernelkit_commands_draw_the_line_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from kernelkit.cli import render_download

    monkeypatch.setattr(render_download, "make_bars", lambda: (_ for _ in ()).throw(ImportError))
    monkeypatch.setattr(render_download, "stderr_isatty", lambda: True)
    with render_download.download_progress():
        drawn = progress.current_progress_reporter()
        assert isinstance(drawn, LineReporter) and drawn.stream is sys.stderr
    monkeypatch.setattr(render_download, "stderr_isatty", lambda: False)
    with render_download.download_progress():
        assert progress.current_progress_reporter() is None  # the library's log record


@pytest.mark.parametrize("value", ["0", "false", "No", " off "])
def test_kernelkit_progress_0_turns_it_off(value: str) -> None:
    assert plan_progress({"KERNELKIT_PROGRESS": value}) is None
    assert plan_progress({"KERNELKIT_PROGRESS": value}, reporter=print) is None
    assert plan_progress({"KERNELKIT_PROGRESS": "1"}) is not None


def test_a_given_reporter_wins_and_the_threshold_is_read() -> None:
    seen: list[DownloadStatus] = []
    plan = plan_progress({"KERNELKIT_PROGRESS_MIN_BYTES": "1024"}, reporter=seen.append)
    assert plan == ProgressPlan(seen.append, 1024)


@pytest.mark.parametrize("value", ["16M", "-1", "1.5"])
def test_a_bad_threshold_is_a_one_line_error_naming_the_variable(value: str) -> None:
    with pytest.raises(UsageError, match="KERNELKIT_PROGRESS_MIN_BYTES=") as info:
        plan_progress({"KERNELKIT_PROGRESS_MIN_BYTES": value})
    assert "\n" not in info.value.message and "whole number of bytes" in str(info.value.hint)


def test_the_setter_installs_and_restores_a_reporter() -> None:
    seen: list[DownloadStatus] = []
    assert progress.current_progress_reporter() is None
    with use_progress_reporter(seen.append):
        assert progress.current_progress_reporter() == seen.append
    assert progress.current_progress_reporter() is None
    assert set_progress_reporter(seen.append) is None
    assert set_progress_reporter(None) == seen.append


# --- the watcher ----------------------------------------------------------------------------


def fill(stage: Path, chunks: int, size: int, pause: float) -> None:
    """Write ``chunks`` pieces of ``size`` bytes into two files, pausing between them."""
    (stage / "build" / "v").mkdir(parents=True)
    with (stage / "build" / "v" / "a.bin").open("wb") as a, \
            (stage / "build" / "v" / "b.bin").open("wb") as b:
        for i in range(chunks):
            (a if i % 2 else b).write(b"x" * size)
            a.flush()
            b.flush()
            time.sleep(pause)


def test_bytes_under_sums_nested_files(tmp_path: Path) -> None:
    fill(tmp_path, 4, 1000, 0)
    (tmp_path / "empty").mkdir()
    assert bytes_under(tmp_path) == 4000
    assert bytes_under(tmp_path / "missing") == 0


def test_the_watcher_reports_growing_bytes_then_finishes(tmp_path: Path) -> None:
    seen: list[DownloadStatus] = []
    plan = ProgressPlan(seen.append, min_bytes=0, interval_s=0.01)
    with watch_download(tmp_path, "lbl", 20 * 50_000, plan):
        fill(tmp_path, 20, 50_000, 0.01)
    assert watcher_threads() == []
    done = [s.done_bytes for s in seen]
    assert done == sorted(done) and len(set(done)) > 3  # it saw the files grow
    assert [s.finished for s in seen].count(True) == 1
    assert seen[-1].finished and not seen[-1].failed
    assert seen[-1].done_bytes == seen[-1].total_bytes == 1_000_000
    assert all(s.label == "lbl" and s.done_bytes <= s.total_bytes for s in seen)
    elapsed = [s.elapsed_s for s in seen]
    assert elapsed == sorted(elapsed)


def test_a_failing_fetch_stops_the_watcher_and_propagates_unchanged(tmp_path: Path) -> None:
    seen: list[DownloadStatus] = []
    boom = OSError("disk full")

    def fetch() -> None:
        with watch_download(tmp_path, "lbl", 10**6, ProgressPlan(seen.append, 0, 0.01)):
            fill(tmp_path, 3, 1000, 0.01)
            raise boom

    with pytest.raises(OSError, match="disk full") as info:
        fetch()
    assert info.value is boom
    assert watcher_threads() == []
    assert seen[-1].finished and seen[-1].failed and seen[-1].done_bytes == 3000


def test_more_bytes_than_listed_never_exceed_the_total(tmp_path: Path) -> None:
    seen: list[DownloadStatus] = []
    with watch_download(tmp_path, "lbl", 1000, ProgressPlan(seen.append, 0, 0.01)):
        fill(tmp_path, 4, 1000, 0.02)
    assert max(s.done_bytes for s in seen) == 1000


def test_a_broken_reporter_is_switched_off_not_fatal(tmp_path: Path,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    calls: list[DownloadStatus] = []

    def broken(s: DownloadStatus) -> None:
        calls.append(s)
        raise RuntimeError("cannot draw")

    with watch_download(tmp_path, "lbl", 1000, ProgressPlan(broken, 0, 0.01)):
        fill(tmp_path, 3, 100, 0.02)
    assert len(calls) == 1 and watcher_threads() == []
    assert "progress reporter failed" in caplog.text


def test_kernelkit_download_draws_one_rich_bar_per_variant() -> None:
    pytest.importorskip("rich")
    from kernelkit.cli.render_download import RichReporter, make_bars

    out = io.StringIO()
    bars = make_bars(file=out, force_terminal=False, width=120)
    draw = RichReporter(bars)
    with bars:
        draw(status(done=0))
        draw(status())
        draw(DownloadStatus("other", 5, 10, 1.0, finished=True, failed=True))
        draw(status(done=120_000_000, finished=True))
    [task, other] = bars.tasks
    assert (task.description, task.completed, task.total) == (LABEL, 120_000_000, 120_000_000)
    assert (other.description, other.completed) == ("other (failed)", 5)
    assert draw.tasks == {}
    assert LABEL in out.getvalue() and "120.0 MB" in out.getvalue()
