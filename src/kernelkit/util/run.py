"""The one subprocess wrapper: every external command goes through this module.

:func:`run` (text, stdout and stderr merged, optionally appended to a log file) serves the
builder and most tools; :func:`run_bytes` (bytes in and out, stderr kept apart) serves git
plumbing, whose output is binary or NUL-separated and parsed; :func:`open_process` streams a
long-lived process (``git cat-file --batch``). All three log the command on the
``kernelkit.run`` logger and raise :class:`~kernelkit.errors.CommandError` with the command,
exit code and output tail; the byte variants also turn a missing executable into one.
"""

from __future__ import annotations

import contextlib
import logging
import os
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

from kernelkit.errors import CommandError
from kernelkit.util.urls import redact_url

log = logging.getLogger("kernelkit.run")

TAIL_LINES = 40


def _shown(argv: list[str]) -> str:
    """The command for the debug log: an inline script (``-c``) shown as ``<script>``, URL
    credentials redacted."""
    return " ".join("<script>" if "\n" in a else redact_url(a) for a in argv)


def _redacted(argv: list[str]) -> list[str]:
    """``argv`` as errors and build logs show it: credentials in URLs redacted."""
    return [redact_url(a) for a in argv]


def _tail(text: str, lines: int = TAIL_LINES) -> str:
    return "\n".join(text.splitlines()[-lines:])


def run(
    cmd: Sequence[str | os.PathLike[str]],
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    log_path: Path | None = None,
    what: str = "",
    input: str | None = None,
    check: bool = True,
    timeout: float | None = None,
    on_line: Callable[[str], None] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``cmd``; return the completed process (stdout and stderr merged into ``stdout``).

    With ``log_path`` the merged output is also appended to that file (the build logs).
    With ``on_line`` each output line is passed on as it arrives (ninja's progress).
    With ``check`` (default) a non-zero exit raises :class:`CommandError`.
    """
    argv = [os.fspath(c) for c in cmd]
    log.debug("run: %s (cwd=%s)", _shown(argv), cwd)
    started = time.monotonic()
    if on_line is not None:
        proc = _stream(argv, cwd, env, on_line, timeout)
    else:
        proc = subprocess.run(
            argv,
            cwd=cwd,
            env=dict(env) if env is not None else None,
            input=input,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            timeout=timeout,
        )
    log.debug("done in %.2f s: %s", time.monotonic() - started, argv[0])
    if log_path is not None:
        log_path.parent.mkdir(parents=True, exist_ok=True)
        with log_path.open("a", encoding="utf-8") as fh:
            fh.write(f"$ {' '.join(_redacted(argv))}\n{proc.stdout}\n[exit {proc.returncode}]\n")
    if check and proc.returncode != 0:
        raise CommandError(_redacted(argv), proc.returncode, _tail(proc.stdout), what=what,
                           log_path=log_path)
    return proc


def _stream(argv: list[str], cwd: str | os.PathLike[str] | None, env: Mapping[str, str] | None,
            on_line: Callable[[str], None],
            timeout: float | None) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` passing each merged output line to ``on_line`` as it arrives."""
    lines: list[str] = []
    with subprocess.Popen(argv, cwd=cwd, env=dict(env) if env is not None else None,
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, errors="replace") as child:
        assert child.stdout is not None
        for line in child.stdout:
            lines.append(line)
            on_line(line.rstrip("\n"))
        returncode = child.wait(timeout=timeout)
    return subprocess.CompletedProcess(argv, returncode, "".join(lines), None)


def _not_found(argv: list[str], exc: OSError, what: str) -> CommandError:
    return CommandError(_redacted(argv), 127, f"cannot start {argv[0]}: {exc.strerror or exc}",
                        what=what)


def run_bytes(
    cmd: Sequence[str | os.PathLike[str]],
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    what: str = "",
    input: bytes | None = None,
    check: bool = True,
) -> subprocess.CompletedProcess[bytes]:
    """Run ``cmd`` with bytes in and out; stdout and stderr captured apart.

    With ``check`` (default) a non-zero exit raises :class:`CommandError` whose tail is stderr.
    """
    argv = [os.fspath(c) for c in cmd]
    log.debug("run: %s (cwd=%s)", _shown(argv), cwd)
    started = time.monotonic()
    try:
        proc = subprocess.run(argv, cwd=cwd, env=dict(env) if env is not None else None,
                              input=input, capture_output=True)
    except OSError as exc:
        raise _not_found(argv, exc, what) from None
    log.debug("done in %.2f s: %s", time.monotonic() - started, argv[0])
    if check and proc.returncode != 0:
        tail = _tail(proc.stderr.decode(errors="replace"))
        raise CommandError(_redacted(argv), proc.returncode, tail, what=what)
    return proc


@contextlib.contextmanager
def open_process(
    cmd: Sequence[str | os.PathLike[str]],
    *,
    env: Mapping[str, str] | None = None,
    what: str = "",
) -> Iterator[subprocess.Popen[bytes]]:
    """A process with binary stdin/stdout pipes (stderr discarded) for request/response use.

    The caller closes stdin when done; a non-zero exit after a clean ``with`` body raises
    :class:`CommandError`."""
    argv = [os.fspath(c) for c in cmd]
    log.debug("run: %s", _shown(argv))
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL,
                                env=dict(env) if env is not None else None)
    except OSError as exc:
        raise _not_found(argv, exc, what) from None
    with proc:
        yield proc
    if proc.returncode not in (0, None):
        raise CommandError(_redacted(argv), proc.returncode, "", what=what)
