"""The unit suite's guard (tests/unit/conftest.py) refuses every way of starting a process."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable

import pytest

MOVE = "move this test to tests/integration"


@pytest.mark.parametrize("start", [
    lambda: subprocess.run([sys.executable, "-c", "pass"], check=False),
    lambda: subprocess.Popen(["git", "--version"]),
    lambda: os.system("true"),
    lambda: os.fork(),
    lambda: os.posix_spawn(sys.executable, [sys.executable, "-c", "pass"], {}),
], ids=["subprocess.run", "Popen", "os.system", "os.fork", "os.posix_spawn"])
def test_starting_a_process_is_refused(start: Callable[[], object],
                                       no_processes: list[str]) -> None:
    with pytest.raises(AssertionError, match=MOVE):  # the guard's ProcessInUnitTest
        start()
    assert len(no_processes) == 1
    no_processes.clear()  # refused as it should be: this test passes


def test_the_kernelkit_wrapper_is_refused_too(no_processes: list[str]) -> None:
    from kernelkit.util.run import run

    with pytest.raises(AssertionError, match=MOVE):
        run(["git", "--version"])
    assert no_processes and "git" in no_processes[0]
    no_processes.clear()
