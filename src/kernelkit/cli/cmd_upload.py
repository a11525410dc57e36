"""``kernelkit upload``: publish a build tree to a hub."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from kernelkit.errors import KernelkitError
from kernelkit.hub import Hub, open_hub


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
    p.add_argument("--private", action="store_true",
                   help="create the repository private (Hugging Face Hub API only; ignored if "
                   "it exists)")
    p.add_argument("--create-pr", action="store_true",
                   help="open pull requests instead of moving the branches (Hugging Face Hub "
                   "API only)")
    p.add_argument("--output-json", type=Path, metavar="PATH",
                   help="also write the result as JSON to PATH ('-': standard output)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kernelkit.hub.publish import upload

    hub = open_hub(args.hub)
    if args.private:
        from kernelkit.hub.hf import HuggingFaceHub

        if not isinstance(hub, HuggingFaceHub):
            raise KernelkitError(f"--private needs a Hugging Face Hub API endpoint, not {hub!r}",
                                 hint="use --hub hf (with HF_ENDPOINT for a `kernelkit serve` "
                                      "hub), or drop --private")
        hub.private = True
    result = upload(args.path, hub, repo_id=args.repo_id, branch=args.branch, tag=args.tag,
                    message=args.message, create_pr=args.create_pr)
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if args.output_json is not None:
        text = json.dumps(result_json(result, hub), indent=2) + "\n"
        if str(args.output_json) == "-":
            sys.stdout.write(text)
            return 0
        args.output_json.write_text(text, encoding="utf-8")
    print(f"hub:      {hub!r}")
    print(f"repo:     {result.repo_id}")
    print(f"branch:   {result.branch}")
    state = "" if result.changed else " (no changes: nothing new to upload)"
    print(f"commit:   {result.commit}{state}")
    if result.tag:
        print(f"tag:      {result.tag}")
    print(f"variants: {', '.join(result.variants)}")
    for branch, url in result.pull_requests:
        print(f"pull request ({branch}): {url}")
    return 0


def result_json(result: Any, hub: Hub) -> dict[str, Any]:
    """Upstream's ``--output-json`` fields (status, repo_id, branch, url, pull_requests), plus
    kernelkit's commit, tag and variants."""
    status = ("pull_request_created" if result.pull_requests
              else "uploaded" if result.changed else "no_changes")
    web_url = getattr(hub, "web_url", None)
    return {
        "status": status,
        "repo_id": result.repo_id,
        "branch": result.branch,
        "url": web_url(result.repo_id, result.branch) if web_url else repr(hub),
        "pull_requests": [{"branch": b, "url": u} for b, u in result.pull_requests],
        "commit": result.commit,
        "main_commit": result.main_commit,
        "tag": result.tag,
        "variants": list(result.variants),
    }
