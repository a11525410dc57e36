"""``kernelkit upload``: publish a build tree to a hub."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from kernelkit.cli import ui
from kernelkit.cli.parser import add_hub, add_json, add_project
from kernelkit.errors import UsageError
from kernelkit.hub import Hub
from kernelkit.util.fs import temp_sibling


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "upload",
        help="publish build variants to a hub",
        description="Verify every variant's digest, then publish build/<variant>/ to a hub "
        "branch (v<version> unless --branch), atomically.",
    )
    add_project(p, "a kernel project or its build directory (default: the current directory)")
    add_hub(p)
    p.add_argument("--repo-id", metavar="REPO_ID",
                   help="ORG/NAME (default: [general.hub] repo-id in build.toml)")
    p.add_argument("--branch", metavar="BRANCH",
                   help="branch (default: [general.hub] branch, else v<version>)")
    p.add_argument("--tag", metavar="TAG", help="also tag the commit with a release tag vX.Y.Z "
                   "(version specifiers such as '>=1.2' only see tagged releases)")
    p.add_argument("-m", "--message", metavar="TEXT", help="commit message")
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
    add_json(p)
    p.add_argument("--output-json", type=Path, metavar="FILE",
                   help="deprecated (use --json): also write the result as JSON to FILE ('-': "
                   "standard output)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import tempfile

    from kernelkit.cli.online import open_online_hub
    from kernelkit.publish.upload import upload
    from kernelkit.source_build.pack import pack_for_upload

    hub = open_online_hub(args.hub, "upload")
    if args.private:
        from kernelkit.hub.hf import HuggingFaceHub

        if not isinstance(hub, HuggingFaceHub):
            raise UsageError(f"--private needs a Hugging Face Hub API endpoint, not the hub "
                             f"{hub}", hint="use --hub hf (with HF_ENDPOINT for a `kernelkit "
                             "serve` hub), or drop --private")
        hub.private = True
    key = None
    if args.sign or args.key is not None:
        from kernelkit.cli.cmd_sign import signing_key

        key = signing_key(args.key)  # before anything is published
    if args.output_json is not None:
        ui.warn("--output-json is deprecated: use --json (the same document on stdout)")
    to_file = args.output_json is not None and str(args.output_json) != "-"
    reserved = reserve_output(args.output_json) if to_file else None  # before publishing
    try:
        with tempfile.TemporaryDirectory(prefix="kernelkit-sources-") as tmp:
            sources, note = (None, None) if args.no_sources else pack_for_upload(args.project,
                                                                                 Path(tmp))
            if note:
                ui.warn(note)
            result = upload(args.project, hub, repo_id=args.repo_id, branch=args.branch,
                            tag=args.tag, message=args.message, create_pr=args.create_pr,
                            sources=sources, sign_key=key)
    except BaseException:
        if reserved is not None:
            reserved.unlink(missing_ok=True)
        raise
    for warning in result.warnings:
        ui.warn(warning)
    notes = untagged_notes(result, hub)
    data = result_json(result, hub, notes)
    if reserved is not None:
        reserved.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        os.replace(reserved, args.output_json)
    if args.json or str(args.output_json) == "-":
        ui.emit_json(data)
        return 0
    print(f"hub:      {hub}")
    print(f"repo:     {result.repo_id}")
    print(f"branch:   {result.branch}")
    state = "" if result.changed else " (no changes: nothing new to upload)"
    print(f"commit:   {result.commit}{state}")
    print(f"tag:      {result.tag or '(none)'}")
    print(f"variants: {', '.join(result.variants)}")
    if result.main_commit:
        print(f"main:     {result.main_commit} (the card, README.md)")
    if result.sources:
        print(f"sources:  {result.sources}")
    for branch, url in result.pull_requests:
        print(f"pull request ({branch}): {url}")
    for text in notes:
        ui.note(f"note: {text}")
    return 0


def untagged_notes(result: Any, hub: Hub) -> list[str]:
    """What an upload without ``--tag`` did, what it means, and the command that tags it."""
    from kernelkit.hub.names import SEMVER_TAG, VERSION_BRANCH

    branch = VERSION_BRANCH.match(result.branch)
    if result.tag or result.pull_requests or branch is None:
        return []
    major = int(branch.group(1))
    tags = {t: c for t, c in hub.list_refs(result.repo_id).tags.items()
            if (m := SEMVER_TAG.match(t)) and int(m.group(1)) == major}
    if result.commit in tags.values():
        return []
    newest = max((_minor_patch(t) for t in tags), default=None)
    suggest = f"v{major}.0.0" if newest is None else f"v{major}.{newest[0]}.{newest[1] + 1}"
    retag = (f"kernelkit hub retag {result.repo_id} {suggest} {result.commit[:12]} "
             f"--hub {hub_arg(hub)} --yes")
    text = (f"no release tag: `version={major}` (branch {result.branch}) loads this build, but "
            f"version specifiers such as '>={major}.0' only see tagged releases; tag it: "
            f"`{retag}` (or upload with --tag {suggest})")
    return [text]


def _minor_patch(tag: str) -> tuple[int, int]:
    from kernelkit.hub.names import SEMVER_TAG

    m = SEMVER_TAG.match(tag)
    assert m is not None
    return int(m.group(2)), int(m.group(3))


def hub_arg(hub: Hub) -> str:
    """``--hub`` as a person types it for ``hub`` (``hf`` for the Hub API: its endpoint is
    ``HF_ENDPOINT``), shell-quoted."""
    import shlex

    from kernelkit.hub.hf import HuggingFaceHub

    return "hf" if isinstance(hub, HuggingFaceHub) else shlex.quote(str(hub))


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


def result_json(result: Any, hub: Hub, notes: list[str] | None = None) -> dict[str, Any]:
    """Upstream's ``--output-json`` fields (status, repo_id, branch, url, pull_requests), plus
    kernelkit's hub, commit, main_commit, tag, variants and notes."""
    status = ("pull_request_created" if result.pull_requests
              else "uploaded" if result.changed else "no_changes")
    web_url = getattr(hub, "web_url", None)
    return {
        "status": status,
        "repo_id": result.repo_id,
        "branch": result.branch,
        "url": web_url(result.repo_id, result.branch) if web_url else str(hub),
        "pull_requests": [{"branch": b, "url": u} for b, u in result.pull_requests],
        "hub": str(hub),
        "commit": result.commit,
        "main_commit": result.main_commit,
        "tag": result.tag,
        "variants": list(result.variants),
        "sources": result.sources,
        "notes": list(notes or []),
    }
