"""``kernelkit`` command line. Thin: parse arguments, call the library, print.

Every subcommand lives in its own module ``kernelkit/cli/cmd_<name>.py`` exposing
``register(subparsers) -> None``; the parser it adds sets ``func=<handler>`` where the
handler takes the parsed ``argparse.Namespace`` and returns an exit code.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import pkgutil
import sys
from collections.abc import Sequence

import kernelkit
from kernelkit.errors import KernelkitError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kernelkit",
        description="Write, build, ship and load custom PyTorch kernels.",
    )
    parser.add_argument("--version", action="version", version=f"kernelkit {kernelkit.__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log every external command")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    import kernelkit.cli as pkg

    for mod in sorted(m.name for m in pkgutil.iter_modules(pkg.__path__)):
        if mod.startswith("cmd_"):
            importlib.import_module(f"kernelkit.cli.{mod}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(message)s",
        stream=sys.stderr,
    )
    try:
        return int(args.func(args) or 0)
    except KernelkitError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:  # a destination that is not writable, a path that is a file, ...
        where = f": {exc.filename}" if exc.filename else ""
        print(f"error: {exc.strerror or exc}{where}\n  hint: check that the path exists and "
              "that you may write there", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
