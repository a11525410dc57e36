"""``kernelkit merge OUT SHARD_DIR...``: assemble one build tree from shards built elsewhere."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from kernelkit.cli.parser import add_json


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "merge", help="merge build trees from several shards into one build/ directory",
        description="Copy every variant of the SHARDs (each a build/ directory, a project "
        "or a downloaded CI artifact) into OUT, after re-verifying each variant's digests. A "
        "variant found in two shards must be identical in both; otherwise nothing is written. "
        "OUT is written atomically.")
    p.add_argument("out", type=Path, metavar="OUT", help="the merged build tree to create")
    p.add_argument("shards", type=Path, nargs="+", metavar="SHARD", help="the shards' build "
                   "trees (build/ directories, projects or downloaded CI artifacts)")
    p.add_argument("--force", action="store_true", help="replace OUT if it is not empty")
    add_json(p)
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from kernelkit.artifact.merge import merge_build_trees

    result = merge_build_trees(args.out, args.shards, replace=args.force)
    if args.json:
        print(json.dumps({"out": str(result.out),
                          "variants": {n: [str(s) for s in shards]
                                       for n, shards in result.variants.items()}}, indent=2))
        return 0
    print(f"merged {len(result.variants)} variant(s) from {len(args.shards)} shard(s) "
          f"into {result.out}")
    for name, shards in result.variants.items():
        also = f" (identical in {len(shards) - 1} more)" if len(shards) > 1 else ""
        print(f"  {name}  from {shards[0]}{also}")
    return 0
