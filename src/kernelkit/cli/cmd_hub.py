"""``kernelkit hub list``: the repositories of a hub, or the branches and tags of one."""

from __future__ import annotations

import argparse

from kernelkit.errors import UsageError
from kernelkit.hub import open_hub


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("hub", help="inspect a hub")
    sub = p.add_subparsers(dest="hub_command", metavar="ACTION", required=True)
    ls = sub.add_parser("list", help="list repositories, or one repository's branches and tags")
    ls.add_argument("repo_id", nargs="?", help="ORG/NAME: show its branches, tags and variants")
    ls.add_argument("--hub", help="hub directory, git+<url>, or hf (default: $KERNELKIT_HUB, "
                    "$KERNELKIT_HUB_DIR, ~/.cache/kernelkit/hub)")
    ls.set_defaults(func=run_list)


def run_list(args: argparse.Namespace) -> int:
    hub = open_hub(args.hub)
    if args.repo_id is None:
        list_repos = getattr(hub, "list_repos", None)
        if list_repos is None:
            raise UsageError(f"{hub!r} cannot list its repositories",
                             hint="name one: kernelkit hub list ORG/NAME")
        for repo_id in list_repos():
            print(repo_id)
        return 0
    refs = hub.list_refs(args.repo_id)
    for kind, names in (("branch", refs.branches), ("tag", refs.tags)):
        for name, commit in sorted(names.items()):
            variants = hub.list_dirs(args.repo_id, commit, "build")
            print(f"{kind:6} {name:12} {commit[:12]}  {' '.join(variants) or '-'}")
    return 0
