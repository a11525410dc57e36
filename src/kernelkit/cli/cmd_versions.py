"""``kernelkit versions REPO``: deprecated, as upstream's ``kernels versions`` (0.19 announces
its removal for 0.20): it prints a note on stderr and runs ``kernelkit variants
--all-versions`` (same options, same output)."""

from __future__ import annotations

import argparse
import sys

DEPRECATION = ("`kernelkit versions` is deprecated and will be removed; use "
               "`kernelkit variants --all-versions` instead")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "versions", help="deprecated: use `kernelkit variants --all-versions`",
        description="Deprecated (as upstream's `kernels versions`): the variants of every "
        "major version and which fit this machine. Use `kernelkit variants --all-versions`.")
    p.add_argument("kernel", help="kernel repository, org/name")
    p.add_argument("--only-compatible", action="store_true",
                   help="only the variants that fit this machine")
    p.add_argument("--backend", default=None, help="judge variants for this backend")
    p.add_argument("--hub", default=None, help="hub: a directory, git+<url> or hf")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kernelkit.cli import cmd_variants

    print(f"warning: {DEPRECATION}", file=sys.stderr)
    return cmd_variants.run(argparse.Namespace(**vars(args), all_versions=True, version=None,
                                               revision=None))
