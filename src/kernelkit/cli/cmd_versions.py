"""``kernelkit versions REPO``: deprecated, as upstream's ``kernels versions`` (0.19 announces
its removal for 0.20): it prints a note on stderr and runs ``kernelkit variants
--all-versions`` (same options, same output)."""

from __future__ import annotations

import argparse

from kernelkit.cli.parser import add_hub, add_json, add_repo_id
from kernelkit.cli.ui import warn

DEPRECATION = ("`kernelkit versions` is deprecated and will be removed; use "
               "`kernelkit variants --all-versions` instead")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "versions", help="deprecated: use `kernelkit variants --all-versions`",
        description="Deprecated (as upstream's `kernels versions`): the variants of every "
        "major version and which fit this machine. Use `kernelkit variants --all-versions`.")
    add_repo_id(p)
    p.add_argument("--only-compatible", action="store_true",
                   help="only the variants that fit this machine")
    p.add_argument("--backend", default=None, metavar="BACKEND",
                   help="judge variants for this backend")
    add_hub(p)
    add_json(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kernelkit.cli import cmd_variants

    warn(DEPRECATION)
    fields = {k: v for k, v in vars(args).items() if k != "repo_id"}
    return cmd_variants.run(argparse.Namespace(**fields, kernel=args.repo_id, all_versions=True,
                                               version=None, revision=None))
