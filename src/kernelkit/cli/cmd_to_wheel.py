"""``kernelkit to-wheel REPO --version V [--hub HUB] [--dest DIR]``: one wheel per variant."""

from __future__ import annotations

import argparse
from pathlib import Path


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
    p.add_argument("repo_id", help="kernel repository, org/name")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--version", help="major version (1) or specifier ('>=1.1,<2')")
    g.add_argument("--revision", help="branch, tag or commit")
    p.add_argument("--hub", default=None, help="hub: a directory, git+<url> or hf")
    p.add_argument("--dest", type=Path, default=Path("dist"), help="output directory (dist)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kernelkit.hub import open_hub
    from kernelkit.loader.settings import read_settings
    from kernelkit.wheel.api import kernel_to_wheels

    settings = read_settings()
    hub = settings.watch_fetches(open_hub(args.hub))
    built = kernel_to_wheels(args.repo_id, hub, args.dest, cache_dir=settings.cache_dir,
                             version=args.version, revision=args.revision)
    for w in built:
        print(w.path)
    return 0
