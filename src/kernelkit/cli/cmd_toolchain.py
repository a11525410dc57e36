"""``kernelkit toolchain lock|verify [PROJECT] [--json]``: pin every variant's build environment
(wheels, versions, sha256) in ``kernelkit.toolchain.lock``, or check such a lock."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from kernelkit.cli.parser import add_json, add_project
from kernelkit.cli.ui import emit_json, plural

if TYPE_CHECKING:
    from kernelkit.builder.toolchain.locking import ToolchainLockResult


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("toolchain", help="lock or verify the build environments' wheels")
    tsub = p.add_subparsers(dest="toolchain_command", metavar="ACTION", required=True)
    lock = tsub.add_parser("lock", help="write kernelkit.toolchain.lock")
    verify = tsub.add_parser("verify", help="check the lock's shape and local wheel hashes")
    for q in (lock, verify):
        add_project(q)
        add_json(q)
    lock.add_argument("--variant", action="append", default=[], metavar="PATTERN",
                      help="lock only variants matching this fnmatch pattern (repeatable)")
    lock.set_defaults(func=_lock)
    verify.set_defaults(func=_verify)


def _lock(args: argparse.Namespace) -> int:
    from kernelkit.builder.api import write_toolchain_lock

    path, result = write_toolchain_lock(args.project, args.variant)
    if args.json:
        emit_json({"path": str(path),
                   "locked": {name: len(entry.wheels)
                              for name, entry in sorted(result.lock.variants.items())},
                   "skipped": dict(result.skipped),
                   "notes": list(result.notes)})
        return 0
    print_lock_result(path, result)
    return 0


def print_lock_result(path: Path, result: ToolchainLockResult) -> None:
    for name in sorted(result.lock.variants):
        print(f"locked  {name} ({plural(len(result.lock.variants[name].wheels), 'wheel')})")
    for name, why in result.skipped:
        print(f"skipped {name}: {why}", file=sys.stderr)
    for note in result.notes:
        print(f"note: {note}", file=sys.stderr)
    print(f"wrote {path}")


def _verify(args: argparse.Namespace) -> int:
    from kernelkit.builder.toolchain.toolchain_lock import (
        LOCK_FILENAME,
        read_lock,
        verify_local_wheels,
    )

    path = Path(args.project) / LOCK_FILENAME
    lock = read_lock(path)
    for entry in lock.variants.values():
        verify_local_wheels(entry, path, include_toolkit=True)
    if args.json:
        emit_json({"path": str(path), "variants": sorted(lock.variants), "ok": True})
        return 0
    print(f"{path}: {plural(len(lock.variants), 'variant')}, shape and local wheel hashes OK")
    return 0
