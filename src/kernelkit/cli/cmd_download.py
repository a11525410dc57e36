"""``kernelkit download [PROJECT] [--all-variants] [--dest DIR] [--hub HUB] [--build-missing]
[--json]``."""

from __future__ import annotations

import argparse
from pathlib import Path

from kernelkit.cli import ui
from kernelkit.cli.parser import add_hub, add_json, add_project


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "download",
        help="download the kernels pinned in kernels.lock for offline use",
        description="Download every kernel pinned in PROJECT/kernels.lock (this machine's "
        "variant, or all with --all-variants) into the kernelkit cache or DIR, verifying each "
        "against its digest and its lock hash (kernels.lock.hashes, when present). Load them "
        "offline with "
        "kernelkit.load_kernel(repo_id, lockfile=..., cache_dir=DIR) or KERNELKIT_CACHE=DIR.",
    )
    add_project(p, "the project directory holding kernels.lock (default: the current "
                "directory)")
    p.add_argument("--all-variants", action="store_true",
                   help="download every locked variant, not only this machine's")
    p.add_argument("--dest", type=Path, default=None, metavar="DIR",
                   help="a kernelkit cache root to download into (default: $KERNELKIT_CACHE)")
    p.add_argument("--backend", default=None, metavar="BACKEND",
                   help="backend to choose the variant for")
    add_hub(p)
    add_json(p)
    p.add_argument("--build-missing", action="store_true", default=None,
                   help="when no locked variant fits this machine, build it from the sources "
                   "the lock pins (default: $KERNELKIT_BUILD_MISSING); caches the sources for "
                   "offline use")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kernelkit.cli.online import open_online_hub
    from kernelkit.cli.render_download import download_progress
    from kernelkit.lock.download import download_locked
    from kernelkit.lock.lockfile import LOCK_NAME, REWRITE_HINT, read_lock_file
    from kernelkit.source_build.api import source_build_provider
    from kernelkit.util.paths import default_cache_dir

    cache_dir = args.dest if args.dest is not None else default_cache_dir()
    hub = open_online_hub(args.hub, "download")
    provider = source_build_provider(args.build_missing)
    if provider is not None:  # its stages as lines, its compile as `kernelkit build` shows it
        import dataclasses
        import sys

        from kernelkit.cli.render_build import PlainRenderer

        provider = dataclasses.replace(
            provider, on_stage=ui.note, on_event=PlainRenderer(sys.stderr))
    with download_progress(quiet=ui.settings.quiet or args.json):
        done = download_locked(args.project, hub, cache_dir,
                               all_variants=args.all_variants, backend=args.backend,
                               variant_provider=provider)
    lock = read_lock_file(args.project / LOCK_NAME)
    notes = []
    if lock.legacy:
        notes.append(f"{lock.path} is in kernelkit's previous format, which upstream kernels "
                     f"cannot read; {REWRITE_HINT}")
    elif not any(entry.variants for entry in lock.locks):
        notes.append(f"{lock.path} has no variant hashes (upstream's lock pins commits only); "
                     "each variant was verified against its digest. `kernelkit lock` adds the "
                     "hashes in kernels.lock.hashes.")
    if args.json:
        ui.emit_json({"lockfile": str(lock.path), "cache_dir": str(cache_dir), "downloaded": [
            {"repo_id": d.repo_id, "commit": d.sha, "variant": d.variant, "path": str(d.path)}
            for d in done], "notes": notes})
        return 0
    for d in done:
        ui.note(f"Downloaded `{d.repo_id}` with SHA: {d.sha} ({d.variant}) -> {d.path}")
    for text in notes:
        ui.note(f"note: {text}")
    return 0
