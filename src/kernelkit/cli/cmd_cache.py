"""``kernelkit cache ls|rm|prune``: the loader's cache, with sizes (``loader/cache_admin.py``).

``ls`` lists every cached repository (its hub), commit (the refs naming it) and variant with
sizes; upstream ``kernels cache ls`` has the listing, ``rm`` and ``prune`` are kernelkit's.
Removals never touch a repository another process is downloading into (it is reported busy,
exit code 1); ``--dry-run`` shows what would go and how much it frees.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kernelkit.cli.parser import add_hub, add_json, add_repo_id
from kernelkit.errors import ExitCode

if TYPE_CHECKING:
    from kernelkit.loader.cache_admin import CacheListing, Removal, RemovalResult


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "cache", help="list the loader's cache, remove from it, prune it",
        description="Inspect and clean the kernelkit loader cache ($KERNELKIT_CACHE, default "
        "~/.cache/kernelkit/kernels).")
    sub = p.add_subparsers(dest="cache_command", metavar="ACTION", required=True)
    ls = sub.add_parser("ls", help="list cached kernels: hub, revision, variant, size")
    _common(ls)
    ls.set_defaults(func=run_ls)

    rm = sub.add_parser("rm", help="remove a cached kernel, one of its revisions or variants")
    add_repo_id(rm)
    rm.add_argument("--revision", default=None, metavar="REVISION",
                    help="only this commit (id or prefix) or cached branch/tag name (v1)")
    rm.add_argument("--variant", default=None, metavar="PATTERN",
                    help="only the build variants matching this fnmatch pattern (a name "
                    "matches itself)")
    add_hub(rm, "only the copy from this hub (a directory, git+<url> or hf)")
    rm.add_argument("--dry-run", action="store_true", help="show what would be removed")
    _common(rm)
    rm.set_defaults(func=run_rm)

    prune = sub.add_parser(
        "prune", help="remove revisions no branch or tag points to, and download leftovers",
        description="Remove cached commits that no cached branch or tag points to any more "
        "(superseded versions, kernels loaded by commit id) and what interrupted downloads "
        "left behind. Commits pinned by the kernels.lock files given with --keep-lock stay.")
    prune.add_argument("--keep-lock", action="append", type=Path, default=[], metavar="PATH",
                       help="keep the commits this kernels.lock (or project directory) pins; "
                       "repeatable")
    prune.add_argument("--dry-run", action="store_true", help="show what would be removed")
    _common(prune)
    prune.set_defaults(func=run_prune)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cache-dir", type=Path, default=None,
                   help="the cache to work on (default: $KERNELKIT_CACHE)")
    add_json(p)


def _listing(args: argparse.Namespace) -> CacheListing:
    from kernelkit.loader.cache_admin import list_cache
    from kernelkit.util.paths import default_cache_dir

    return list_cache(args.cache_dir if args.cache_dir is not None else default_cache_dir())


def human_size(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"  # pragma: no cover - the loop always returns


# --- ls -------------------------------------------------------------------------------------


def listing_json(listing: CacheListing) -> dict[str, Any]:
    return {"cache_dir": str(listing.cache_dir), "size": listing.size, "repos": [
        {"repo_id": r.repo_id, "hub": r.hub, "folder": str(r.folder), "size": r.size,
         "revisions": [
             {"commit": rev.commit, "refs": list(rev.refs), "size": rev.size,
              "variants": [{"variant": v.name, "size": v.size, "verified": v.verified,
                            "built_locally": v.built_locally}
                           for v in rev.variants]}
             for rev in r.revisions]}
        for r in listing.repos]}


def run_ls(args: argparse.Namespace) -> int:
    listing = _listing(args)
    if args.json:
        print(json.dumps(listing_json(listing), indent=2))
        return ExitCode.OK
    rows = [(r.repo_id, r.hub or "(unknown)", _revision_label(rev.commit, rev.refs),
             v.name + (" (built here)" if v.built_locally else ""), human_size(v.size))
            for r in listing.repos for rev in r.revisions for v in rev.variants]
    if not rows:
        print(f"No cached kernels in {listing.cache_dir}.")
        return ExitCode.OK
    print(_table(("REPO", "HUB", "REVISION", "VARIANT", "SIZE"), rows))
    print(f"\n{len(listing.repos)} repositories, {human_size(listing.size)} in "
          f"{listing.cache_dir}")
    return ExitCode.OK


def _revision_label(commit: str, refs: tuple[str, ...]) -> str:
    return f"{', '.join(refs)} ({commit[:12]})" if refs else f"{commit[:12]} (detached)"


def _table(header: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> str:
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header))]
    lines = []
    for row in (header, *rows):
        cells = [c.rjust(w) if i == len(row) - 1 else c.ljust(w)
                 for i, (c, w) in enumerate(zip(row, widths, strict=True))]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


# --- rm / prune -----------------------------------------------------------------------------


def run_rm(args: argparse.Namespace) -> int:
    from kernelkit.loader.cache_admin import plan_rm
    from kernelkit.settings import process_environ

    hub = None
    if args.hub is not None:
        from kernelkit.hub.hubid import identity_of

        hub = identity_of(args.hub, process_environ())
    plan = plan_rm(_listing(args), args.repo_id, revision=args.revision, variant=args.variant,
                   hub=hub)
    return _carry_out(plan, args)


def run_prune(args: argparse.Namespace) -> int:
    from kernelkit.loader.cache_admin import plan_prune

    return _carry_out(plan_prune(_listing(args), keep=_locked_commits(args.keep_lock)), args)


def _locked_commits(paths: list[Path]) -> set[tuple[str, str]]:
    from kernelkit.lock.api import LockedSet

    return {(lock.repo_id, lock.sha) for p in paths for lock in LockedSet.read(p).locks}


def _carry_out(plan: list[Removal], args: argparse.Namespace) -> int:
    from kernelkit.loader.cache_admin import RemovalResult, execute

    result = RemovalResult(removed=list(plan)) if args.dry_run else execute(plan)
    if args.json:
        print(json.dumps({"dry_run": args.dry_run, "freed": result.freed,
                          "removed": [_removal_json(r) for r in result.removed],
                          "busy": [_removal_json(r) for r in result.busy]}, indent=2))
    else:
        _print_result(result, dry_run=args.dry_run)
    return ExitCode.ERROR if result.busy else ExitCode.OK


def _removal_json(r: Removal) -> dict[str, Any]:
    return {"repo_id": r.repo_id, "what": r.what, "commit": r.commit, "variant": r.variant,
            "reason": r.reason, "size": r.size, "path": str(r.path)}


def _print_result(result: RemovalResult, *, dry_run: bool) -> None:
    if not result.removed and not result.busy:
        print("Nothing to remove.")
        return
    verb = "Would remove" if dry_run else "Removed"
    for r in result.removed:
        print(f"{verb} {_label(r)} ({human_size(r.size)})")
    for r in result.busy:
        print(f"Skipped {_label(r)}: another process is downloading into {r.folder}; try again")
    print(f"{'Would free' if dry_run else 'Freed'} {human_size(result.freed)}.")


def _label(r: Removal) -> str:
    if r.what == "repository":
        return f"{r.repo_id} (every revision)"
    if r.what == "revision":
        detached = " (detached)" if r.reason == "detached" else ""
        return f"{r.repo_id}@{(r.commit or '')[:12]}{detached}"
    if r.what == "variant":
        return f"{r.repo_id}@{(r.commit or '')[:12]} {r.variant}"
    return f"leftover {r.path}"
