"""``kernelkit update-build [PROJECT] [--json]``: rewrite an older ``build.toml`` as edition 5."""

from __future__ import annotations

import argparse

from kernelkit.cli.parser import add_json, add_project
from kernelkit.cli.ui import emit_json


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "update-build",
        help="convert an edition 3/4 build.toml to edition 5 (comments are not kept)",
    )
    add_project(p)
    add_json(p)
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from kernelkit.manifest import update_build
    from kernelkit.manifest.parse import manifest_path

    path = manifest_path(args.project)
    updated = update_build(args.project)
    if args.json:
        emit_json({"path": str(path), "updated": updated})
    elif updated:
        print(f"{path}: updated to edition 5")
    else:
        print(f"{path}: already edition 5; nothing to do")
    return 0
