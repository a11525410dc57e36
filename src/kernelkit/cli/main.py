"""``kernelkit`` command line. Thin: parse arguments, call the library, print.

Every subcommand lives in its own module ``kernelkit/cli/cmd_<name>.py`` exposing
``register(subparsers) -> None``; the parser it adds sets ``func=<handler>`` where the
handler takes the parsed ``argparse.Namespace`` and returns an exit code (``ExitCode.OK``, or
``ExitCode.ERROR`` for a result that is a failure, such as a check with errors).

This is the one place that turns errors into exit codes: a handler raises, :func:`main` prints
one line and returns :func:`kernelkit.errors.exit_code` of the error (the table is in
``kernelkit.errors`` and README.md, "Exit codes"). ``OSError`` (permission denied, disk full) is the
environment's, not a bug: one line and exit code 1 too.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import pkgutil
import sys
from collections.abc import Sequence

from kernelkit._version import __version__
from kernelkit.errors import ExitCode, KernelkitError, exit_code
from kernelkit.util.urls import redact_url


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kernelkit",
        description="Write, build, ship and load custom PyTorch kernels.",
    )
    parser.add_argument("--version", action="version", version=f"kernelkit {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log every external command")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    import kernelkit.cli as pkg

    for mod in sorted(m.name for m in pkgutil.iter_modules(pkg.__path__)):
        if mod.startswith("cmd_"):
            importlib.import_module(f"kernelkit.cli.{mod}").register(sub)
    return parser


class _Redacting(logging.Formatter):
    """A handler's formatter, with ``util.urls.redact_url`` over what it writes."""

    def __init__(self, inner: logging.Formatter | None) -> None:
        super().__init__()
        self.inner = inner or logging.Formatter()

    def format(self, record: logging.LogRecord) -> str:
        return redact_url(self.inner.format(record))


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(relativeCreated)6d ms %(message)s" if args.verbose else "%(message)s",
        stream=sys.stderr,
    )
    for handler in logging.getLogger().handlers:  # every log line: URL credentials redacted
        handler.setFormatter(_Redacting(handler.formatter))
    try:
        return int(args.func(args) or ExitCode.OK)
    except KernelkitError as exc:
        print(f"error: {redact_url(str(exc))}", file=sys.stderr)
        return exit_code(exc)
    except OSError as exc:  # a destination that is not writable, a path that is a file, ...
        where = f": {exc.filename}" if exc.filename else ""
        print(f"error: {exc.strerror or exc}{where}\n  hint: check that the path exists and "
              "that you may write there", file=sys.stderr)
        return exit_code(exc)
    except KeyboardInterrupt as exc:
        print("interrupted", file=sys.stderr)
        return exit_code(exc)


if __name__ == "__main__":
    sys.exit(main())
