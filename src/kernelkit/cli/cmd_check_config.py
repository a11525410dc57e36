"""``kernelkit check-config [KERNEL_DIR]``: parse and validate ``build.toml``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "check-config",
        help="validate build.toml and the project (package directory, CUDA capabilities) and "
             "report every problem with its line",
    )
    p.add_argument("kernel_dir", nargs="?", type=Path, default=Path("."), metavar="KERNEL_DIR",
                   help="the kernel project directory (default: the current directory)")
    p.add_argument("--no-check-sources", dest="check_sources", action="store_false",
                   help="do not check that source and include paths exist")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from kernelkit.builder.plan.project_check import project_problems
    from kernelkit.errors import ManifestError
    from kernelkit.manifest import load_manifest

    manifest = load_manifest(args.kernel_dir, check_sources=args.check_sources)
    for warning in manifest.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    # what the planner refuses builds for
    problems = project_problems(manifest, check_sources=args.check_sources)
    if problems:
        raise ManifestError(manifest.path, problems)
    print(f"{manifest.path}: build.toml is valid")
    return 0
