"""``kernelkit upload``: publish a build tree to a hub."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from kernelkit.errors import KernelkitError, UsageError
from kernelkit.hub import Hub, open_hub
from kernelkit.util.fs import temp_sibling


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
    p.add_argument("--sign", action="store_true",
                   help="sign every variant first (`kernelkit sign`) and publish the signatures")
    from kernelkit.cli.cmd_sign import add_key_argument

    add_key_argument(p)
    p.add_argument("--no-sources", action="store_true",
                   help="do not publish the project's sources (sources/<digest>.tar.gz, which "
                   "lets users build a variant no published one fits: build_missing)")
    p.add_argument("--output-json", type=Path, metavar="PATH",
                   help="also write the result as JSON to PATH ('-': standard output)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import tempfile

    from kernelkit.publish.upload import upload
    from kernelkit.source_build.pack import pack_for_upload

    hub = open_hub(args.hub)
    if args.private:
        from kernelkit.hub.hf import HuggingFaceHub

        if not isinstance(hub, HuggingFaceHub):
            raise KernelkitError(f"--private needs a Hugging Face Hub API endpoint, not {hub!r}",
                                 hint="use --hub hf (with HF_ENDPOINT for a `kernelkit serve` "
                                      "hub), or drop --private")
        hub.private = True
    key = None
    if args.sign or args.key is not None:
        from kernelkit.cli.cmd_sign import signing_key

        key = signing_key(args.key)  # before anything is published
    to_file = args.output_json is not None and str(args.output_json) != "-"
    reserved = reserve_output(args.output_json) if to_file else None  # before publishing
    try:
        with tempfile.TemporaryDirectory(prefix="kernelkit-sources-") as tmp:
            sources, note = (None, None) if args.no_sources else pack_for_upload(args.path,
                                                                                 Path(tmp))
            if note:
                print(f"warning: {note}", file=sys.stderr)
            result = upload(args.path, hub, repo_id=args.repo_id, branch=args.branch,
                            tag=args.tag, message=args.message, create_pr=args.create_pr,
                            sources=sources, sign_key=key)
    except BaseException:
        if reserved is not None:
            reserved.unlink(missing_ok=True)
        raise
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if args.output_json is not None:
        text = json.dumps(result_json(result, hub), indent=2) + "\n"
        if reserved is None:
            sys.stdout.write(text)
            return 0
        reserved.write_text(text, encoding="utf-8")
        os.replace(reserved, args.output_json)
    print(f"hub:      {hub!r}")
    print(f"repo:     {result.repo_id}")
    print(f"branch:   {result.branch}")
    state = "" if result.changed else " (no changes: nothing new to upload)"
    print(f"commit:   {result.commit}{state}")
    if result.tag:
        print(f"tag:      {result.tag}")
    print(f"variants: {', '.join(result.variants)}")
    if result.sources:
        print(f"sources:  {result.sources}")
    for branch, url in result.pull_requests:
        print(f"pull request ({branch}): {url}")
    return 0


def reserve_output(path: Path) -> Path:
    """A new file next to ``path`` that the result will be renamed from: proof, before
    anything is published, that ``path`` can be written (a directory, a missing or
    read-only parent fail here, not after the upload)."""
    if path.is_dir():
        raise UsageError(f"--output-json {path}: is a directory",
                         hint="pass a file path (e.g. upload.json), or '-' for standard output")
    tmp = temp_sibling(path)
    try:
        tmp.open("x").close()
    except OSError as exc:
        raise UsageError(f"--output-json {path}: cannot write there "
                         f"({exc.strerror or exc})", hint="pass a writable file path, or '-' "
                         "for standard output; nothing was uploaded") from None
    return tmp


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
        "sources": result.sources,
    }
