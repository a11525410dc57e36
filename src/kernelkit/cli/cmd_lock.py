"""``kernelkit lock [PROJECT] [--hub HUB] [--refresh]``: pin [tool.kernels.dependencies]."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "lock",
        help="resolve [tool.kernels.dependencies] to commits and write kernels.lock",
        description="Resolve every kernel in [tool.kernels.dependencies] of PROJECT/pyproject.toml "
        "to a commit and write PROJECT/kernels.lock (the format upstream kernels reads and "
        "writes) and the variant hashes kernelkit verifies to PROJECT/kernels.lock.hashes. "
        "Entries whose commit did not change are kept; unchanged files are not touched. A lock "
        "in kernelkit's previous format is rewritten.",
    )
    p.add_argument("project", nargs="?", type=Path, default=Path("."),
                   help="project directory holding pyproject.toml (default: .)")
    p.add_argument("--hub", default=None,
                   help="hub: a directory, git+<url> or hf (default: $KERNELKIT_HUB or the "
                   "local hub)")
    p.add_argument("--refresh", action="store_true",
                   help="recompute every variant hash, even for commits already locked")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kernelkit.cli.online import open_online_hub
    from kernelkit.lock.project import lock_project

    result = lock_project(args.project, open_online_hub(args.hub, "lock"), refresh=args.refresh)
    for lock in result.locks:
        mark = "updated" if lock.repo_id in result.changed else "unchanged"
        print(f"{lock.repo_id}: {lock.sha} ({len(lock.variants)} variants, {mark})",
              file=sys.stderr)
    state = "wrote" if result.written else "up to date:"
    print(f"{state} {result.path} (hashes: {result.path.name}.hashes)", file=sys.stderr)
    if result.converted:
        print(f"converted {result.path} from kernelkit's previous format to the one upstream "
              "kernels reads", file=sys.stderr)
    return 0
