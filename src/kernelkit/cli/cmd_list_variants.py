"""``kernelkit list-variants [KERNEL_DIR] [--json]``: the variants a project builds, and which of
them this machine can build (and why not)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("list-variants",
                       help="list the variants a kernel builds and which this machine can build")
    p.add_argument("kernel_dir", nargs="?", type=Path, default=Path("."), metavar="KERNEL_DIR",
                   help="the kernel project directory (default: the current directory)")
    p.add_argument("--system", default=None,
                   help="list the variants of another system (e.g. aarch64-linux)")
    p.add_argument("--json", action="store_true", help="print JSON (one object per variant)")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from kernelkit.builder.matrix_build import gather_facts, host_system, plan_matrix
    from kernelkit.manifest import load_manifest
    from kernelkit.variants.matrix import targets_for

    manifest = load_manifest(args.kernel_dir)
    here = host_system()
    system = args.system or here
    facts = gather_facts(targets_for(manifest, system=system), system=here)
    plan = plan_matrix(manifest, facts, system=system)
    if args.json:
        print(json.dumps([b.to_json() for b in plan.builds], indent=2))
        return 0
    width = max((len(b.target.variant) for b in plan.builds), default=10)
    print(f"{manifest.general.name}: {len(plan.builds)} variants on {system} "
          f"({len(plan.buildable)} buildable here)")
    for b in plan.builds:
        mark = "yes" if b.buildable else "no "
        req = "required" if b.target.required else "optional"
        print(f"  {b.target.variant:<{width}}  {req}  buildable: {mark}  {b.reason}")
    return 0
