"""``kernelkit variants REPO|PATH [--version N | --revision R]``: the loader's decision trace.

Shows every build variant of one revision with whether it fits this machine and why, in the
loader's preference order; the first line marked ``preferred`` is what ``get_kernel`` loads.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

from kernelkit.errors import ExitCode

if TYPE_CHECKING:
    from kernelkit.variants.choose import Decision
    from kernelkit.variants.host import System


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "variants", help="show which build variant get_kernel would load here, and why",
        description="Rank the build variants of a kernel (a hub repository at one version or "
        "revision, or a local directory) for this machine, with a reason for each.")
    p.add_argument("kernel", help="org/name on the hub, or a local kernel directory")
    which = p.add_mutually_exclusive_group()
    which.add_argument(
        "--version", type=str, default=None,
        help='major version (branch v<N>) or a specifier over release tags, e.g. ">=1.1,<2"',
    )
    which.add_argument("--revision", default=None, help="branch, tag or commit")
    p.add_argument("--backend", default=None, help="judge variants for this backend (cpu, ...)")
    p.add_argument("--hub", default=None, help="hub: a directory, git+<url> or hf")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kernelkit.variants.choose import format_trace
    from kernelkit.variants.host import detect_system

    system = detect_system(args.backend)
    decisions = _decisions(args, system)
    if args.json:
        print(json.dumps({
            "system": system.describe(),
            "variants": [{"variant": d.variant, "accepted": d.accepted, "reason": d.reason}
                         for d in decisions],
        }, indent=2))
    else:
        print(f"System: {system.describe()}\n")
        print(format_trace(decisions) or "(no build variants)")
    return ExitCode.OK if decisions and decisions[0].accepted else ExitCode.ERROR


def _decisions(args: argparse.Namespace, system: System) -> list[Decision]:
    from kernelkit.errors import UsageError
    from kernelkit.variants.choose import rank_variants

    path = Path(args.kernel)
    if path.is_dir():
        if args.version is not None or args.revision is not None:
            raise UsageError(f"{path} is a local directory: --version/--revision do not apply")
        from kernelkit.artifact.layout import discover_variants

        tree = discover_variants(path)
        return rank_variants(tree.names if tree else [], system)
    from kernelkit.hub import open_hub
    from kernelkit.loader.api import get_kernel_variants

    hub = open_hub(args.hub) if args.hub else None
    return get_kernel_variants(args.kernel, revision=args.revision, version=args.version,
                               backend=args.backend, hub=hub)
