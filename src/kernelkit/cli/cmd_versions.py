"""``kernelkit versions REPO [--hub HUB] [--backend B]``: versions and fitting variants."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "versions", help="list a kernel's versions and which variants fit this machine",
        description="List major versions (branches v<N>), releases (tags v<x.y.z>) and other "
        "branches/tags with their commits, and for each which build variants this machine "
        "accepts (and why the others are rejected).")
    p.add_argument("repo_id", help="kernel repository, org/name")
    p.add_argument("--hub", default=None, help="hub: a directory, git+<url> or hf")
    p.add_argument("--backend", default=None, help="judge variants for this backend")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kernelkit.cli.online import open_online_hub
    from kernelkit.lock.report import versions_report
    from kernelkit.variants.choose import format_trace
    from kernelkit.variants.host import detect_system

    system = detect_system(args.backend)
    rows = versions_report(open_online_hub(args.hub, "versions"), args.repo_id, system)
    print(f"System: {system.describe()}\n")
    if not any(r.kind in ("version", "release") for r in rows):
        print(f"Repository does not support kernel versions: {args.repo_id}")
    for row in rows:
        label = {"version": "Version", "release": "Release"}.get(row.kind, row.kind.capitalize())
        print(f"{label} {row.name} ({row.commit[:12]}):\n")
        print("  " + (format_trace(row.decisions).replace("\n", "\n  ") or "(no variants)"))
        print()
    return 0
