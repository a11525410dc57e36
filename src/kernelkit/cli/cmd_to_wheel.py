"""``kernelkit to-wheel REPO_ID --version V [--hub HUB] [--dest DIR] [--json]``: one wheel per
variant."""

from __future__ import annotations

import argparse
from pathlib import Path

from kernelkit.cli.parser import add_hub, add_json, add_repo_id, add_revision, add_version
from kernelkit.cli.ui import emit_json


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "to-wheel",
        help="convert every variant of a kernel version into an installable wheel",
        description="Write one wheel per build variant, each verified against its digest first "
        "(through the kernel cache, as get_kernel does). The torch build is in the local version "
        "label (img2gray-1.2.0+torch213cpu-cp39-abi3-manylinux_2_28_x86_64.whl); pick yours "
        "with `pip install --find-links DIR img2gray==1.2.0+torch213cpu`. The wheel's package "
        "is named after the repository and never shadows the standard library, torch or an "
        "installed package.",
    )
    add_repo_id(p)
    g = p.add_mutually_exclusive_group(required=True)
    add_version(g)
    add_revision(g)
    add_hub(p)
    p.add_argument("--dest", type=Path, default=Path("dist"), metavar="DIR",
                   help="output directory (default: dist)")
    add_json(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kernelkit.cli.online import open_online_hub
    from kernelkit.loader.settings import read_settings
    from kernelkit.wheel.api import kernel_to_wheels

    settings = read_settings()
    hub = open_online_hub(args.hub, "to-wheel")
    built = kernel_to_wheels(args.repo_id, hub, args.dest, cache_dir=settings.cache_dir,
                             version=args.version, revision=args.revision)
    if args.json:
        emit_json({"repo_id": args.repo_id, "wheels": [
            {"variant": w.variant, "path": str(w.path)} for w in built]})
        return 0
    for w in built:
        print(w.path)
    return 0
