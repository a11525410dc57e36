"""``kernelkit check [PROJECT]``: compliance of a build tree; exit 1 on any error."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from kernelkit.cli.parser import add_json, add_project
from kernelkit.errors import ExitCode, KernelkitError, UsageError


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "check",
        help="check build variants: layout, metadata, digests, manylinux/abi3 symbols, import",
        description="Check every build variant under PROJECT (a project, its build/ directory or "
        "one variant): layout, metadata.json, digests, manylinux_2_28 symbol versions, abi3, "
        "DT_NEEDED, RPATH, op registration and namespaces, and that it imports in a fresh "
        "interpreter. Exits 1 when any error is found.",
    )
    add_project(p, "a kernel project, its build/ directory or one variant directory "
                "(default: the current directory)")
    p.add_argument("--python", type=Path, metavar="PYTHON",
                   help="interpreter used to import variants (default: this one)")
    p.add_argument("--variant-python", action="append", default=[], metavar="VARIANT=PYTHON",
                   help="interpreter for one variant (repeatable), e.g. "
                   "torch214-cxx11-cu130-x86_64-linux=/envs/cu130/bin/python")
    p.add_argument("--no-import", action="store_true", help="skip the import checks")
    add_json(p)
    p.add_argument("--matrix", action="store_true",
                   help="also report which required variants of the supported matrix are "
                   "missing, per backend and system (needs the project's build.toml)")
    p.add_argument("--require-matrix", action="store_true",
                   help="like --matrix, and exit 1 when a required variant is missing")
    p.set_defaults(func=run_check)


def _variant_pythons(items: list[str]) -> dict[str, Path]:
    out = {}
    for item in items:
        variant, sep, python = item.partition("=")
        if not sep or not variant or not python:
            raise UsageError(f"--variant-python {item!r}: expected VARIANT=PYTHON")
        out[variant] = Path(python)
    return out


def _find_project(path: Path) -> Path:
    for candidate in (path, *path.resolve().parents):
        if (candidate / "build.toml").is_file():
            return candidate
    raise KernelkitError(f"no build.toml found at or above {path}",
                         hint="run the matrix check from inside the kernel project")


def _matrix(path: Path) -> list[dict[str, object]]:
    from kernelkit.check.api import check_matrix
    from kernelkit.manifest import load_manifest

    manifest = load_manifest(_find_project(path), check_sources=False)
    return [
        {"backend": c.backend, "system": c.system, "compliant": c.compliant,
         "required": list(c.required), "missing": list(c.missing),
         "excluded_by_manifest": list(c.excluded_by_manifest)}
        for c in check_matrix(path, manifest)
    ]


def _print_matrix(rows: list[dict[str, object]]) -> None:
    print("supported-matrix compliance (required variants per backend and system):")
    for r in rows:
        missing = r["missing"]
        state = "compliant" if r["compliant"] else f"missing {', '.join(missing)}"  # type: ignore[arg-type]
        print(f"  {r['backend']:<6} {r['system']:<15} {state}")


def run_check(args: argparse.Namespace) -> int:
    from kernelkit.check import check_build

    report = check_build(args.project, python=args.python,
                         variant_pythons=_variant_pythons(args.variant_python),
                         import_check=not args.no_import)
    matrix = _matrix(args.project) if (args.matrix or args.require_matrix) else None
    matrix_ok = not args.require_matrix or all(r["compliant"] for r in matrix or [])
    if args.json:
        data = report.to_json()
        if matrix is not None:
            data["matrix"] = matrix
        print(json.dumps(data, indent=2))
        return ExitCode.OK if report.ok and matrix_ok else ExitCode.ERROR
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
    if matrix is not None:
        _print_matrix(matrix)
    return ExitCode.OK if report.ok and matrix_ok else ExitCode.ERROR
