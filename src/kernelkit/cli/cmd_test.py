"""``kernelkit test [PROJECT] [--variant PATTERN] [-- PYTEST_ARGS]``: run the project's own
``tests/`` against each built variant that fits this machine, in that variant's environment
(``kernelkit.testing``); one line per variant at the end, non-zero if any failed."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from kernelkit.cli.parser import add_json, add_project


def register(sub: Any) -> None:
    p = sub.add_parser(
        "test", help="run the project's tests/ against each built variant that fits here",
        description="Run the project's pytest suite (tests/) once per built variant under "
                    "build/ that this machine can load, in that variant's interpreter (this "
                    "one, or the pinned environment it was built in), with the variant "
                    "importable under its package name and LOCAL_KERNELS pointing at it, so "
                    "suites written for upstream `kernels` (get_kernel(\"org/name\", "
                    "version=1)) run unchanged. Arguments after `--` go to pytest.")
    add_project(p)
    p.add_argument("--variant", dest="patterns", action="append", default=[],
                   metavar="PATTERN", help="test only the variants matching this fnmatch "
                   "pattern (repeatable)")
    p.add_argument("--build-dir", type=Path, default=None, metavar="DIR",
                   help="directory of the variant directories (default: PROJECT/build)")
    add_json(p, "capture pytest's output into log files and print the results as JSON")
    p.add_argument("pytest_args", nargs=argparse.REMAINDER, metavar="-- PYTEST_ARGS",
                   help="arguments passed to pytest")
    p.set_defaults(func=run)


def _split_pytest_args(args: argparse.Namespace) -> list[str]:
    """The pytest arguments. argparse hands over what follows PROJECT (with or without the
    ``--``, depending on what precedes it; a bare ``-- ARGS`` even fills PROJECT): kernelkit's
    own options there are applied, everything from ``--`` or the first other token is pytest's."""
    rest = list(args.pytest_args)
    if str(args.project).startswith("-"):  # `kernelkit test -- -k x`: no PROJECT given
        rest, args.project = [str(args.project), *rest], Path(".")
    i = 0
    while i < len(rest):
        if rest[i] == "--json":
            args.json, i = True, i + 1
        elif rest[i] in ("--variant", "--build-dir") and i + 1 < len(rest):
            if rest[i] == "--variant":
                args.patterns.append(rest[i + 1])
            else:
                args.build_dir = Path(rest[i + 1])
            i += 2
        else:
            break
    return rest[i + 1:] if i < len(rest) and rest[i] == "--" else rest[i:]


def run(args: argparse.Namespace) -> int:
    from kernelkit.errors import WHOSE
    from kernelkit.settings import process_environ
    from kernelkit.testing import choose_variant_tests, run_variant_tests

    extra = _split_pytest_args(args)
    manifest, targets = choose_variant_tests(args.project, patterns=args.patterns,
                                             build_dir=args.build_dir)
    outcomes = []
    for t in targets:
        if t.python is not None and not args.json:
            print(f"== testing {t.variant} with {t.python}", file=sys.stderr, flush=True)
        outcomes.append(run_variant_tests(manifest, t, extra, environ=process_environ(),
                                          stream=not args.json))
    if args.json:
        print(json.dumps([o.to_json() for o in outcomes], indent=2))
    else:
        for o in outcomes:
            why = f"{WHOSE[o.who]}: {o.reason}" if o.who else o.reason
            log = f" (log: {o.log_path})" if o.log_path else ""
            print(f"{o.status:<7} {o.variant}: {why}{log}")
        counts = {s: sum(o.status == s for o in outcomes) for s in ("passed", "failed", "skipped")}
        print(", ".join(f"{n} {s}" for s, n in counts.items()))
    return 1 if any(o.status == "failed" for o in outcomes) else 0
