"""``kernelkit hub ls|rm-version|retag``: what a hub holds, and the two changes to published
versions there are (``hub/admin.py``: plan, then act, atomic where the hub can be).

``ls`` (alias ``list``) lists the repositories, or one repository's branches and tags with
their variants. ``rm-version REPO_ID VERSION`` deletes a version (the branch ``vN`` and its
release tags, or one release tag); ``retag REPO_ID TAG REVISION`` points a release tag at
another commit. Both print their plan and change nothing without ``--yes``.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from kernelkit.cli import ui
from kernelkit.cli.parser import add_hub, add_json, add_repo_id
from kernelkit.errors import ExitCode, UsageError

if TYPE_CHECKING:
    from kernelkit.hub.admin import RefChange
    from kernelkit.hub.port import Hub


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("hub", help="list a hub's kernels, remove a version, move a tag")
    sub = p.add_subparsers(dest="hub_command", metavar="ACTION", required=True)
    ls = sub.add_parser("ls", aliases=["list"],
                        help="list repositories, or one repository's branches and tags")
    add_repo_id(ls, "ORG/NAME: show its branches, tags and variants", optional=True)
    add_hub(ls)
    add_json(ls)
    ls.set_defaults(func=run_ls)

    rm = sub.add_parser(
        "rm-version", help="delete a version: its branch vN and release tags, or one tag",
        description="Delete version N of a repository (the branch vN and every release tag "
        "vN.x.y) or one release tag (vN.x.y), in one atomic change on a hub directory or a git "
        "remote; main and its card stay. Lock files that pin a deleted commit keep working "
        "only from caches that hold it.")
    add_repo_id(rm)
    rm.add_argument("version", metavar="VERSION",
                    help="a major version (1 or v1) or one release tag (v1.2.0)")
    _change_options(rm)
    rm.set_defaults(func=run_rm_version)

    retag = sub.add_parser(
        "retag", help="point a release tag at another commit (or create it)",
        description="Create the release tag TAG at REVISION, or move it there (tags never move "
        "otherwise), atomically with a compare-and-swap on the tag's current commit.")
    add_repo_id(retag)
    retag.add_argument("tag", metavar="TAG", help="the release tag, v<major>.<minor>.<patch>")
    retag.add_argument("revision", metavar="REVISION",
                       help="the branch, tag or commit it names afterwards")
    _change_options(retag)
    retag.set_defaults(func=run_retag)


def _change_options(p: argparse.ArgumentParser) -> None:
    add_hub(p)
    p.add_argument("--yes", action="store_true",
                   help="make the change (without it: print what would change, exit 2)")
    p.add_argument("--dry-run", action="store_true", help="print what would change, exit 0")
    add_json(p)


def _hub(args: argparse.Namespace) -> Hub:
    from kernelkit.cli.online import open_online_hub

    return open_online_hub(args.hub, f"hub {args.hub_command}")


# --- ls -------------------------------------------------------------------------------------


def run_ls(args: argparse.Namespace) -> int:
    hub = _hub(args)
    if args.repo_id is None:
        list_repos = getattr(hub, "list_repos", None)
        if list_repos is None:
            raise UsageError(f"the hub {hub} cannot list its repositories",
                             hint="name one: kernelkit hub ls ORG/NAME")
        repos = list(list_repos())
        if args.json:
            ui.emit_json({"hub": str(hub), "repos": repos})
        else:
            for repo_id in repos:
                print(repo_id)
        return ExitCode.OK
    refs = hub.list_refs(args.repo_id)
    rows = [(kind, name, commit, hub.list_dirs(args.repo_id, commit, "build"))
            for kind, names in (("branch", refs.branches), ("tag", refs.tags))
            for name, commit in sorted(names.items())]
    if args.json:
        ui.emit_json({"hub": str(hub), "repo_id": args.repo_id, "refs": [
            {"kind": kind, "name": name, "commit": commit, "variants": variants}
            for kind, name, commit, variants in rows]})
        return ExitCode.OK
    for kind, name, commit, variants in rows:
        print(f"{kind:6} {name:12} {commit[:12]}  {' '.join(variants) or '-'}")
    return ExitCode.OK


# --- rm-version / retag -----------------------------------------------------------------------


def run_rm_version(args: argparse.Namespace) -> int:
    from kernelkit.hub.admin import plan_rm_version

    hub = _hub(args)
    return _carry_out(args, hub, plan_rm_version(hub, args.repo_id, args.version),
                      f"Remove version {args.version} with kernelkit")


def run_retag(args: argparse.Namespace) -> int:
    from kernelkit.hub.admin import plan_retag

    hub = _hub(args)
    return _carry_out(args, hub, plan_retag(hub, args.repo_id, args.tag, args.revision),
                      f"Tag {args.tag} with kernelkit")


def _carry_out(args: argparse.Namespace, hub: Hub, changes: list[RefChange],
               message: str) -> int:
    from kernelkit.hub.admin import apply_changes

    done = bool(changes) and args.yes and not args.dry_run
    if done:
        apply_changes(hub, args.repo_id, changes, message)
    if args.json:
        ui.emit_json({"hub": str(hub), "repo_id": args.repo_id, "applied": done,
                      "changes": [c.to_json() for c in changes]})
    else:
        verb = "" if done else "would "
        for c in changes:
            print(_describe(c, verb))
        if not changes:
            print("nothing to change")
    if changes and not args.yes and not args.dry_run:
        print("error: nothing was changed: pass --yes to make the change above (or --dry-run "
              "to only show it)", file=sys.stderr)
        return ExitCode.USAGE
    return ExitCode.OK


def _describe(c: RefChange, verb: str) -> str:
    what = f"{c.kind} {c.name}"
    if c.new is None:
        return f"{verb}delete {what} ({_short(c.old)})"
    if c.old is None:
        return f"{verb}create {what} at {_short(c.new)}"
    return f"{verb}move {what} from {_short(c.old)} to {_short(c.new)}"


def _short(commit: Any) -> str:
    return str(commit)[:12]
