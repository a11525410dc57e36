"""Verification receipts: the cheap check a cached variant gets on every fresh-process load.

After a variant is verified against its digest, a receipt records, for each file, ``(size,
mtime_ns, ctime_ns, inode)`` plus the SHA-256 of ``metadata.json``. A later process compares
with one ``stat`` per file (one ``scandir`` per directory); only when something differs does it
hash again (``verify.reverify``). ``ctime`` is part of the receipt because user space cannot set
it: a file rewritten in place with its ``mtime`` restored (``os.utime``) still changes ``ctime``.
Limit: file timestamps have the kernel's clock-tick granularity (a few ms), so a same-size,
same-inode rewrite within that window after verification would go unnoticed.

Every entry is checked on the way (``kernelkit.loader.owned``): a variant or receipt another
user could have written is refused, not trusted. This module stays light (``json``, ``os``): it
is on the warm load path.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from kernelkit.loader.owned import check_stat, read_owned, write_owned

if TYPE_CHECKING:
    from kernelkit.artifact.digest import Digest

RECEIPT_FORMAT = 1
Stats = dict[str, list[int]]


def scan(variant_dir: Path) -> Stats:
    """``relpath -> [size, mtime_ns, ctime_ns, inode]`` for every file of the variant except
    bytecode (``__pycache__``/``*.pyc``: kernels are imported from source, bytecode is never
    read, see ``importer.py``). The directory, every sub-directory and every file must be the
    user's own (``kernelkit.loader.owned``): ``UnsafeCacheError`` otherwise."""
    check_stat(variant_dir, os.lstat(variant_dir))
    out: Stats = {}
    stack = [("", str(variant_dir))]
    while stack:
        prefix, directory = stack.pop()
        with os.scandir(directory) as entries:
            for e in entries:
                if e.is_dir(follow_symlinks=False):
                    if e.name != "__pycache__":
                        check_stat(e.path, e.stat(follow_symlinks=False))
                        stack.append((f"{prefix}{e.name}/", e.path))
                elif not e.name.endswith(".pyc"):
                    st = e.stat(follow_symlinks=False)
                    check_stat(e.path, st)
                    out[prefix + e.name] = [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]
    return out


def read_receipt(path: Path) -> dict[str, object] | None:
    raw = read_owned(path)
    if raw is None:
        return None
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("format") != RECEIPT_FORMAT:
        return None
    return data


def receipt_matches(receipt: dict[str, object] | None, variant_dir: Path) -> bool:
    """Whether every file still has the size/mtime/ctime/inode recorded (none added or gone)."""
    if receipt is None:
        return False
    try:
        return scan(variant_dir) == receipt.get("files")
    except (FileNotFoundError, NotADirectoryError):
        return False


def write_receipt(path: Path, variant_dir: Path, *, own_digest: Digest | None,
                  metadata_raw: bytes | None = None) -> None:
    """Record the stats of a just-verified variant. ``own_digest`` (the digest computed at the
    first download) is stored only for variants whose metadata carries no digest;
    ``metadata_raw``: the ``metadata.json`` bytes that were verified (read again otherwise)."""
    raw = metadata_raw if metadata_raw is not None else (variant_dir / "metadata.json").read_bytes()
    data = {
        "format": RECEIPT_FORMAT,
        "metadata_sha256": hashlib.sha256(raw).hexdigest(),
        "digest": own_digest.to_json() if own_digest is not None else None,
        "files": scan(variant_dir),
    }
    write_owned(path, json.dumps(data, separators=(",", ":")).encode())


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
