"""Unit tests are pure logic: none may start a process (git, a compiler, a fresh interpreter).

The autouse :func:`no_processes` guard (as cibuildwheel's unit tests have) makes every way of
starting one raise, and fails the test afterwards even when the code under test swallowed the
error, so a unit test that spawns is found at once: move it to ``tests/integration/``.
"""

from __future__ import annotations

import _posixsubprocess  # type: ignore[import-not-found]
import os
import subprocess
from collections.abc import Callable, Iterator
from typing import Any

import pytest

MOVE = "unit tests start no processes: move this test to tests/integration (git mv)"

# Every way Python starts a process: subprocess (and asyncio) through _posixsubprocess's
# fork_exec (bound into subprocess as _fork_exec), multiprocessing's spawn and forkserver
# through the module attribute; the rest are os functions.
_OS = ("fork", "forkpty", "posix_spawn", "posix_spawnp", "system", "execv", "execve", "execvp",
       "execvpe", "execl", "execle", "execlp", "execlpe", "spawnv", "spawnve", "spawnvp",
       "spawnvpe", "popen")


class ProcessInUnitTest(AssertionError):
    """A unit test tried to start a process."""


@pytest.fixture(autouse=True)
def no_processes(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    attempts: list[str] = []

    def refuse(what: str) -> Callable[..., Any]:
        def refused(*args: Any, **kwargs: Any) -> Any:
            shown = what
            if what == "subprocess" and len(args) > 1 and args[1]:
                shown = f"subprocess {[os.fsdecode(a) for a in args[1]][:4]}"
            attempts.append(shown)
            raise ProcessInUnitTest(f"{shown}: {MOVE}")
        return refused

    monkeypatch.setattr(_posixsubprocess, "fork_exec", refuse("subprocess"))
    if hasattr(subprocess, "_fork_exec"):  # bound at import by subprocess (3.11+)
        monkeypatch.setattr(subprocess, "_fork_exec", refuse("subprocess"))
    for name in _OS:
        if hasattr(os, name):
            monkeypatch.setattr(os, name, refuse(f"os.{name}"))
    yield attempts
    if attempts:
        pytest.fail(f"{attempts[0]}: {MOVE}", pytrace=False)
