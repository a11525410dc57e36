"""``kernelkit check [PATH]``: compliance of a build tree; exit 1 on any error."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from kernelkit.errors import KernelkitError


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "check",
        help="check build variants: layout, metadata, digests, manylinux/abi3 symbols, import",
        description="Check every build variant under PATH (a project, its build/ directory or "
        "one variant): layout, metadata.json, digests, manylinux_2_28 symbol versions, abi3, "
        "DT_NEEDED, RPATH, op registration and namespaces, and that it imports in a fresh "
        "interpreter. Exits 1 when any error is found.",
    )
    p.add_argument("path", nargs="?", default=".", type=Path, help="default: current directory")
    p.add_argument("--python", type=Path, metavar="PYTHON",
                   help="interpreter used to import variants (default: this one)")
    p.add_argument("--variant-python", action="append", default=[], metavar="VARIANT=PYTHON",
                   help="interpreter for one variant (repeatable), e.g. "
                   "torch214-cxx11-cu130-x86_64-linux=/envs/cu130/bin/python")
    p.add_argument("--no-import", action="store_true", help="skip the import checks")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=run_check)


def _variant_pythons(items: list[str]) -> dict[str, Path]:
    out = {}
    for item in items:
        variant, sep, python = item.partition("=")
        if not sep or not variant or not python:
            raise KernelkitError(f"--variant-python {item!r}: expected VARIANT=PYTHON")
        out[variant] = Path(python)
    return out


def run_check(args: argparse.Namespace) -> int:
    from kernelkit.check import check_build

    report = check_build(args.path, python=args.python,
                         variant_pythons=_variant_pythons(args.variant_python),
                         import_check=not args.no_import)
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
        return 0 if report.ok else 1
    for variant, findings in report.by_variant().items():
        if not variant and not findings:
            continue
        status = "ok" if not findings else f"{len(findings)} finding(s)"
        print(f"{variant or '(build tree)'}: {status}")
        for f in findings:
            where = f" [{f.file}]" if f.file else ""
            print(f"  {f.severity:<7} {f.code}{where}: " + f.message.replace("\n", "\n      "))
            print(f"          fix: {f.fix}")
    n_err, n_warn = len(report.errors), len(report.warnings)
    print(f"{len(report.variants)} variant(s) checked: {n_err} error(s), {n_warn} warning(s)")
    return 0 if report.ok else 1
