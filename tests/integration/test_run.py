"""The one subprocess wrapper (``kernelkit.util.run``): real processes, typed errors."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kernelkit.errors import CommandError
from kernelkit.hub.gitrepo import GitRepo
from kernelkit.util.run import open_process, run, run_bytes


def test_run_merges_output_and_raises_with_tail(tmp_path: Path) -> None:
    code = "import sys; print('out'); print('boom', file=sys.stderr); sys.exit(3)"
    with pytest.raises(CommandError) as info:
        run([sys.executable, "-c", code], what="probe")
    assert info.value.returncode == 3
    assert "boom" in info.value.output_tail
    assert str(info.value).startswith("probe failed (exit code 3)")


def test_run_bytes_round_trips_binary_and_keeps_stderr_apart() -> None:
    code = "import sys; sys.stdout.buffer.write(sys.stdin.buffer.read()[::-1])"
    proc = run_bytes([sys.executable, "-c", code], input=b"\x00\x01\xff")
    assert proc.stdout == b"\xff\x01\x00"
    assert proc.stderr == b""


def test_run_bytes_raises_command_error_with_stderr_tail() -> None:
    code = "import sys; sys.stderr.write('bad ref\\n'); sys.exit(128)"
    with pytest.raises(CommandError) as info:
        run_bytes([sys.executable, "-c", code], what="git fake")
    assert info.value.returncode == 128
    assert info.value.output_tail == "bad ref"


def test_run_bytes_unchecked_returns_the_failure() -> None:
    proc = run_bytes([sys.executable, "-c", "raise SystemExit(2)"], check=False)
    assert proc.returncode == 2


def test_missing_executable_is_a_command_error() -> None:
    with pytest.raises(CommandError) as info:
        run_bytes(["kernelkit-no-such-tool-xyz"])
    assert info.value.returncode == 127
    with pytest.raises(CommandError), open_process(["kernelkit-no-such-tool-xyz"]):
        pass  # pragma: no cover


def test_open_process_raises_on_non_zero_exit() -> None:
    def stream() -> None:
        with open_process([sys.executable, "-c", "raise SystemExit(5)"], what="streamer") as p:
            assert p.stdin is not None
            p.stdin.close()

    with pytest.raises(CommandError) as info:
        stream()
    assert info.value.returncode == 5


def test_git_failure_in_a_repo_is_a_command_error_not_called_process_error(
        tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "k.git")
    repo.init()
    with pytest.raises(CommandError) as info:
        repo.git("rev-parse", "--verify", "no-such-branch")
    assert info.value.command[:2] == ["git", f"--git-dir={tmp_path / 'k.git'}"]
    assert info.value.returncode != 0
    assert str(info.value).startswith("git rev-parse failed")
