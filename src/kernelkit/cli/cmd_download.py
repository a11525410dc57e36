"""``kernelkit download [PROJECT] [--all-variants] [--dest DIR] [--hub HUB]``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


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
    p.add_argument("project", nargs="?", type=Path, default=Path("."),
                   help="project directory holding kernels.lock (default: .)")
    p.add_argument("--all-variants", action="store_true",
                   help="download every locked variant, not only this machine's")
    p.add_argument("--dest", type=Path, default=None,
                   help="a kernelkit cache root to download into (default: $KERNELKIT_CACHE)")
    p.add_argument("--backend", default=None, help="backend to choose the variant for")
    p.add_argument("--hub", default=None, help="hub: a directory, git+<url> or hf")
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

        from kernelkit.cli.render_build import PlainRenderer

        provider = dataclasses.replace(
            provider, on_stage=lambda text: print(text, file=sys.stderr),
            on_event=PlainRenderer(sys.stderr))
    with download_progress():
        done = download_locked(args.project, hub, cache_dir,
                               all_variants=args.all_variants, backend=args.backend,
                               variant_provider=provider)
    for d in done:
        print(f"Downloaded `{d.repo_id}` with SHA: {d.sha} ({d.variant}) -> {d.path}",
              file=sys.stderr)
    lock = read_lock_file(args.project / LOCK_NAME)
    if lock.legacy:
        print(f"note: {lock.path} is in kernelkit's previous format, which upstream kernels "
              f"cannot read; {REWRITE_HINT}", file=sys.stderr)
    elif not any(entry.variants for entry in lock.locks):
        print(f"note: {lock.path} has no variant hashes (upstream's lock pins commits only); "
              "each variant was verified against its digest. `kernelkit lock` adds the hashes "
              "in kernels.lock.hashes.", file=sys.stderr)
    return 0
