"""Verify a variant on disk against its lock hash (``kernels.lock.hashes``, kernelkit's; upstream
≤0.16 kept the same hash in ``kernels.lock`` itself).

A lock without hashes (written by upstream ``kernels lock``, or hashes of another commit) pins
the commit only: the variant is then held to the digest in its ``metadata.json``, which every
download verifies before the variant enters the cache, and nothing more is checked here.

The hash of each file is its git blob id, or its SHA-256 for files the hub stores in LFS. Which
files were LFS is known when the variant is listed on the hub; it is recorded next to the
variant as ``build/.<variant>.lockcheck`` together with the stats of every file at the time of
the last successful check, so a later load re-hashes only when a file changed (one ``stat`` per
file otherwise). Without a record every file is taken as a plain git blob (true on git hubs).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from kernelkit.errors import LockError, LockMismatchError
from kernelkit.hub.port import FileEntry
from kernelkit.loader.owned import read_owned, write_owned
from kernelkit.loader.receipt import scan
from kernelkit.lock.hashing import hash_variant_dir, lfs_paths
from kernelkit.lock.lockfile import KernelLock


def record_path(variant_dir: Path) -> Path:
    return variant_dir.parent / f".{variant_dir.name}.lockcheck"


def _read_record(variant_dir: Path) -> dict[str, Any]:
    """The record, if it is the user's own (``kernelkit.loader.owned``: one another user could
    have written is refused, as the loader's receipts are)."""
    raw = read_owned(record_path(variant_dir))
    try:
        data = json.loads(raw) if raw is not None else None
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def has_lfs_record(variant_dir: Path) -> bool:
    """Whether the LFS files of the variant are known (from a hub listing or a past check)."""
    return "lfs" in _read_record(variant_dir)


def record_lfs(variant_dir: Path, entries: Iterable[FileEntry]) -> None:
    """Remember which files of the variant are LFS files (from a hub listing of ``build/``)."""
    lfs = lfs_paths(entries, variant_dir.name)
    if _read_record(variant_dir).get("lfs", []) != lfs or not record_path(variant_dir).exists():
        write_owned(record_path(variant_dir), json.dumps({"lfs": lfs}).encode())


def verify_locked_variant(variant_dir: Path, lock: KernelLock,
                          variant: str | None = None) -> str | None:
    """Raise unless the files of ``variant_dir`` hash to the lock's value; return the hash
    (``None``: the lock has no hashes, the commit and the variant's digest pin it)."""
    variant = variant or variant_dir.name
    if not lock.variants:
        return None
    entry = lock.variants.get(variant)
    where = f"{lock.repo_id}@{lock.sha[:12]} build/{variant}"
    if entry is None:
        raise LockError(
            f"No lock found for build variant: {variant} ({lock.repo_id} at {lock.sha}); "
            f"locked variants: {', '.join(sorted(lock.variants)) or 'none'}",
            hint="re-run `kernelkit lock <project>` (with --refresh) to lock every variant",
        )
    record = _read_record(variant_dir)
    stats = scan(variant_dir)  # the loader's receipt stats: one stat per file
    if record.get("hash") == entry.hash and record.get("files") == stats:
        return entry.hash
    lfs = record.get("lfs", [])
    actual = hash_variant_dir(variant_dir, lfs=lfs if isinstance(lfs, list) else [])
    if actual != entry.hash:
        raise LockMismatchError(
            where, entry.hash, actual,
            hint=f"variant {variant} on disk ({variant_dir}) is not the locked build: a file "
                 "was changed or the lock file was edited; delete the variant directory and run "
                 "`kernelkit download <project>` again, or re-lock with `kernelkit lock`",
        )
    write_owned(record_path(variant_dir),
                json.dumps({"lfs": lfs, "hash": actual, "files": stats}).encode())
    return actual
