"""``kernelkit`` command line. Thin: parse arguments, call the library, print.

Every subcommand lives in its own module ``kernelkit/cli/cmd_<name>.py`` exposing
``register(subparsers) -> None``; the parser it adds sets ``func=<handler>`` where the
handler takes the parsed ``argparse.Namespace`` and returns an exit code (``ExitCode.OK``, or
``ExitCode.ERROR`` for a result that is a failure, such as a check with errors). What every
command must do (names, ``--json``, exit codes) is docs/cli.md; ``tests/unit/
test_cli_conventions.py`` holds every command it finds here to it.

This is the one place that turns errors into exit codes: a handler raises, :func:`main` prints
one line and returns :func:`kernelkit.errors.exit_code` of the error (the table is in
``kernelkit.errors`` and README.md, "Exit codes"). ``OSError`` (permission denied, disk full) is
the environment's, not a bug: one line and exit code 1 too. A missing optional dependency is
one line with its install command (``cli/extras.py``); standard output closed by its reader
(``kernelkit versions X | head``) ends the command quietly (141, as SIGPIPE); Ctrl-C prints
``interrupted`` (130).
"""

from __future__ import annotations

import importlib
import logging
import os
import pkgutil
import sys
from collections.abc import Sequence

from kernelkit._version import __version__
from kernelkit.cli import ui
from kernelkit.cli.parser import VERBOSITY, Parser, add_verbosity, commands, glue_raw_values
from kernelkit.errors import ExitCode, KernelkitError, exit_code
from kernelkit.util.urls import redact_url


def build_parser() -> Parser:
    parser = Parser(
        prog="kernelkit",
        description="Write, build, ship and load custom PyTorch kernels.",
        epilog="Conventions (exit codes, --json, names): docs/cli.md. Shell completion: "
               "kernelkit completion bash|zsh|fish.",
    )
    parser.add_argument("--version", action="version", version=f"kernelkit {__version__}")
    add_verbosity(parser, top=True)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    import kernelkit.cli as pkg

    for mod in sorted(m.name for m in pkgutil.iter_modules(pkg.__path__)):
        if mod.startswith("cmd_"):
            importlib.import_module(f"kernelkit.cli.{mod}").register(sub)
    for path, below in commands(parser):
        if path:
            add_verbosity(below, top=False)
    return parser


class _Redacting(logging.Formatter):
    """A handler's formatter, with ``util.urls.redact_url`` over what it writes."""

    def __init__(self, inner: logging.Formatter | None) -> None:
        super().__init__()
        self.inner = inner or logging.Formatter()

    def format(self, record: logging.LogRecord) -> str:
        return redact_url(self.inner.format(record))


def _own_or_warning(record: logging.LogRecord) -> bool:
    """Without ``-v``: kernelkit's own records, and other libraries' warnings and errors only
    (no ``HTTP Request: ...`` line per request from httpx under huggingface_hub)."""
    return record.name.startswith("kernelkit") or record.levelno >= logging.WARNING


def _configure_logging(verbosity: int) -> None:
    level = {1: logging.DEBUG, 0: logging.INFO}.get(verbosity, logging.WARNING)
    logging.basicConfig(
        level=level, stream=sys.stderr,
        format="%(relativeCreated)6d ms %(message)s" if verbosity > 0 else "%(message)s")
    for handler in logging.getLogger().handlers:  # every log line: URL credentials redacted
        if not isinstance(handler.formatter, _Redacting):
            handler.setFormatter(_Redacting(handler.formatter))
        handler.removeFilter(_own_or_warning)
        if verbosity <= 0:
            handler.addFilter(_own_or_warning)


def _stdout_closed() -> bool:
    """Whether standard output is a pipe (or socket) whose reader has gone."""
    import select

    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return False
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    return any(events & select.POLLERR for _, events in poller.poll(0))


def _leave_closed_stdout() -> int:
    """Nothing more goes to the closed pipe (nor does the interpreter's last flush fail)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return ExitCode.BROKEN_PIPE


def _run(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(glue_raw_values(sys.argv[1:] if argv is None else argv))
    ui.settings.verbosity = getattr(args, VERBOSITY, 0)
    _configure_logging(ui.settings.verbosity)
    code = int(args.func(args) or ExitCode.OK)
    sys.stdout.flush()  # a closed pipe fails here, inside the handlers below
    return code


def main(argv: Sequence[str] | None = None) -> int:
    from kernelkit.cli.extras import missing_dependency

    try:
        return _run(argv)
    except KernelkitError as exc:
        print(f"error: {redact_url(str(exc))}", file=sys.stderr)
        return exit_code(exc)
    except BrokenPipeError as exc:
        if _stdout_closed():
            return _leave_closed_stdout()
        return _os_error(exc)
    except OSError as exc:  # a destination that is not writable, a path that is a file, ...
        return _os_error(exc)
    except ModuleNotFoundError as exc:
        missing = missing_dependency(exc)
        if missing is None:
            raise
        print(f"error: {missing}", file=sys.stderr)
        return exit_code(missing)
    except KeyboardInterrupt as exc:
        print("interrupted", file=sys.stderr)
        return exit_code(exc)


def _os_error(exc: OSError) -> int:
    where = f": {exc.filename}" if exc.filename else ""
    print(f"error: {exc.strerror or exc}{where}\n  hint: check that the path exists and "
          "that you may write there", file=sys.stderr)
    return exit_code(exc)


if __name__ == "__main__":
    sys.exit(main())
