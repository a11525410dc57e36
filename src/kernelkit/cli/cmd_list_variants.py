"""``kernelkit list-variants [PROJECT] [--json]``: the variants a project builds, and which of
them this machine can build (and why not)."""

from __future__ import annotations

import argparse
import json

from kernelkit.cli.parser import add_json, add_project


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("list-variants",
                       help="list the variants a kernel builds and which this machine can build")
    add_project(p)
    p.add_argument("--system", default=None, metavar="SYSTEM",
                   help="list the variants of another system (e.g. aarch64-linux)")
    add_json(p, "print JSON (one object per variant)")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from kernelkit.builder.api import plan_variants
    from kernelkit.variants.host import host_platform

    system = args.system or host_platform()
    manifest, plan = plan_variants(args.project, system=system)
    if args.json:
        print(json.dumps([b.to_json() for b in plan.builds], indent=2))
        return 0
    width = max((len(b.target.variant) for b in plan.builds), default=10)
    print(f"{manifest.general.name}: {len(plan.builds)} variants on {system} "
          f"({len(plan.buildable)} buildable here)")
    for b in plan.builds:
        mark = "yes" if b.buildable else "no "
        req = "required" if b.target.required else "optional"
        print(f"  {b.target.variant:<{width}}  {req}  buildable: {mark}  {b.explanation}")
    return 0
