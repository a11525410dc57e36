"""``kernelkit update-build [KERNEL_DIR]``: rewrite an older ``build.toml`` as edition 5."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "update-build",
        help="convert an edition 3/4 build.toml to edition 5 (comments are not kept)",
    )
    p.add_argument("kernel_dir", nargs="?", type=Path, default=Path("."), metavar="KERNEL_DIR",
                   help="the kernel project directory (default: the current directory)")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from kernelkit.manifest import update_build
    from kernelkit.manifest.parse import manifest_path

    path = manifest_path(args.kernel_dir)
    if update_build(args.kernel_dir):
        print(f"{path}: updated to edition 5")
    else:
        print(f"{path}: already edition 5; nothing to do")
    return 0
