"""``kernelkit upload``: publish a build tree to a hub."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kernelkit.hub import open_hub


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "upload",
        help="publish build variants to a hub",
        description="Verify every variant's digest, then publish build/<variant>/ to a hub "
        "branch (v<version> unless --branch), atomically.",
    )
    p.add_argument("path", nargs="?", default=".", type=Path,
                   help="kernel project or build directory (default: current directory)")
    p.add_argument("--hub", help="hub directory, git+<url>, or hf (default: $KERNELKIT_HUB, "
                   "$KERNELKIT_HUB_DIR, ~/.cache/kernelkit/hub)")
    p.add_argument("--repo-id", help="ORG/NAME (default: [general.hub] repo-id in build.toml)")
    p.add_argument("--branch", help="branch (default: [general.hub] branch, else v<version>)")
    p.add_argument("--tag", help="also tag the commit with a release tag vX.Y.Z")
    p.add_argument("-m", "--message", help="commit message")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kernelkit.hub.publish import upload

    hub = open_hub(args.hub)
    result = upload(args.path, hub, repo_id=args.repo_id, branch=args.branch, tag=args.tag,
                    message=args.message)
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print(f"hub:      {hub!r}")
    print(f"repo:     {result.repo_id}")
    print(f"branch:   {result.branch}")
    state = "" if result.changed else " (no changes: nothing new to upload)"
    print(f"commit:   {result.commit}{state}")
    if result.tag:
        print(f"tag:      {result.tag}")
    print(f"variants: {', '.join(result.variants)}")
    return 0
