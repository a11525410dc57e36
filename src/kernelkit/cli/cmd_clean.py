"""``kernelkit clean``: remove generated build files and dev-build artifacts (never sources)."""

from __future__ import annotations

import argparse
from typing import Any

from kernelkit.cli.parser import add_json, add_project
from kernelkit.cli.ui import emit_json


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "clean", help="remove generated files and dev-build artifacts",
        description="Remove what `kernelkit create-pyproject` and the editable install created: "
                    "generated files (only if they still carry kernelkit's header), "
                    "_cmake_build/, *.egg-info and dev-built extension modules.")
    add_project(p)
    p.add_argument("-n", "--dry-run", action="store_true", help="only list what would go")
    add_json(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kernelkit.generate.clean import clean_project

    root = args.project.resolve()
    plan = clean_project(root, dry_run=args.dry_run)
    if args.json:
        emit_json({"project": str(root), "dry_run": args.dry_run,
                   "removed": [str(p.relative_to(root)) for p in plan.removed],
                   "kept": [str(p.relative_to(root)) for p in plan.kept]})
        return 0
    verb = "would remove" if args.dry_run else "removed"
    for path in plan.removed:
        print(f"{verb} {path.relative_to(root)}")
    for path in plan.kept:
        print(f"kept {path.relative_to(root)} (edited: no kernelkit header)")
    return 0
