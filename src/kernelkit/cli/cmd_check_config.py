"""``kernelkit check-config [PROJECT] [--json]``: parse and validate ``build.toml``."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from kernelkit.cli.parser import add_json, add_project
from kernelkit.cli.ui import emit_json, warn

if TYPE_CHECKING:
    from kernelkit.errors import Problem


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "check-config",
        help="validate build.toml and the project (package directory, CUDA capabilities) and "
             "report every problem with its line",
    )
    add_project(p)
    p.add_argument("--no-check-sources", dest="check_sources", action="store_false",
                   help="do not check that source and include paths exist")
    add_json(p, "print the result as JSON: the manifest path, warnings and, when invalid, "
             "every problem (exit code 8 still)")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from kernelkit.builder.plan.project_check import project_problems
    from kernelkit.errors import ManifestError
    from kernelkit.manifest import load_manifest

    try:
        manifest = load_manifest(args.project, check_sources=args.check_sources)
        # what the planner refuses builds for
        problems = project_problems(manifest, check_sources=args.check_sources)
        if problems:
            raise ManifestError(manifest.path, problems)
    except ManifestError as exc:
        if args.json:
            emit_json({"path": str(exc.path) if exc.path else None, "valid": False,
                       "warnings": [], "problems": [_problem(p) for p in exc.problems]})
        raise
    if args.json:
        emit_json({"path": str(manifest.path), "valid": True,
                   "warnings": list(manifest.warnings), "problems": []})
        return 0
    for warning in manifest.warnings:
        warn(str(warning))
    print(f"{manifest.path}: build.toml is valid")
    return 0


def _problem(p: Problem) -> dict[str, object]:
    return {"file": str(p.file) if p.file else None, "line": p.line, "field": p.field,
            "message": p.message}
