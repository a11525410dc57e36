"""``kernelkit lock [PROJECT] [--hub HUB] [--refresh] [--json]``: pin
[tool.kernels.dependencies]."""

from __future__ import annotations

import argparse

from kernelkit.cli.parser import add_hub, add_json, add_project
from kernelkit.cli.ui import emit_json, note, plural


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "lock",
        help="resolve [tool.kernels.dependencies] to commits and write kernels.lock",
        description="Resolve every kernel in [tool.kernels.dependencies] of PROJECT/pyproject.toml "
        "to a commit and write PROJECT/kernels.lock (the format upstream kernels reads and "
        "writes) and the variant hashes kernelkit verifies to PROJECT/kernels.lock.hashes. "
        "Entries whose commit did not change are kept; unchanged files are not touched. A lock "
        "in kernelkit's previous format is rewritten.",
    )
    add_project(p, "the project directory holding pyproject.toml (default: the current "
                "directory)")
    add_hub(p)
    p.add_argument("--refresh", action="store_true",
                   help="recompute every variant hash, even for commits already locked")
    add_json(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kernelkit.cli.online import open_online_hub
    from kernelkit.lock.project import lock_project

    result = lock_project(args.project, open_online_hub(args.hub, "lock"), refresh=args.refresh)
    untrusted = _untrusted([lock.repo_id for lock in result.locks])
    if args.json:
        emit_json({"path": str(result.path), "written": result.written,
                   "converted": result.converted, "untrusted": untrusted, "locks": [
                       {"repo_id": lock.repo_id, "commit": lock.sha,
                        "variants": sorted(lock.variants),
                        "changed": lock.repo_id in result.changed} for lock in result.locks]})
        return 0
    for lock in result.locks:
        mark = "updated" if lock.repo_id in result.changed else "unchanged"
        note(f"{lock.repo_id}: {lock.sha} ({plural(len(lock.variants), 'variant')}, {mark})")
    state = "wrote" if result.written else "up to date:"
    note(f"{state} {result.path} (hashes: {result.path.name}.hashes)")
    if result.converted:
        note(f"converted {result.path} from kernelkit's previous format to the one upstream "
             "kernels reads")
    if untrusted:
        note(f"note: {', '.join(untrusted)}: not from a trusted publisher; loading them from "
             f"{result.path.name} (load_kernel, get_locked_kernel) runs their code without "
             "trust_remote_code: this lock is your consent to the locked commits "
             "(docs/security.md, \"Locked loads\")")
    return 0


def _untrusted(repo_ids: list[str]) -> list[str]:
    """The locked repositories whose publisher is not trusted (``KERNELKIT_TRUSTED_PUBLISHERS``
    and the defaults): what locking them consents to is said once, here."""
    from kernelkit.loader.settings import read_settings
    from kernelkit.util.usage import needs_trust

    trusted = read_settings().trusted_publishers
    return sorted(r for r in repo_ids if needs_trust(r, trusted))
