"""The lock hash of a variant: ``git_lfs_concat`` (upstream-loader.md §3.2).

For every file of ``build/<variant>/`` (no ``*.pyc``, nothing under ``__pycache__``) take the
pair ``(relpath inside the variant as UTF-8 bytes, hash)`` where ``hash`` is the file's LFS
SHA-256 when it is stored in LFS, else its git blob id (SHA-1 of ``"blob <len>\\0" + data``).
Sort the pairs; SHA-256 over ``relpath || bytes.fromhex(hash)`` for each; the value is
``"sha256-<hexdigest>"``.

The same value can be computed from a hub listing (``FileEntry`` rows, no download) or from the
files on disk (``hash_variant_dir``), which is how a lock is verified after download.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Collection, Iterable
from pathlib import Path

from kernelkit.errors import LockError
from kernelkit.hub.port import FileEntry

HASH_TYPE = "git_lfs_concat"
HASH_PREFIX = "sha256-"
_CHUNK = 1 << 20


def is_locked_path(relpath: str) -> bool:
    """False for bytecode: ``*.pyc`` files and anything under a ``__pycache__`` directory."""
    parts = relpath.split("/")
    return not relpath.endswith(".pyc") and "__pycache__" not in parts


def concat_hash(pairs: Iterable[tuple[str, str]]) -> str:
    """``"sha256-<hex>"`` over the sorted ``(relpath, hex hash)`` pairs."""
    items = sorted((rel.encode("utf-8"), bytes.fromhex(h)) for rel, h in pairs)
    h = hashlib.sha256()
    for rel, digest in items:
        h.update(rel)
        h.update(digest)
    return HASH_PREFIX + h.hexdigest()


def variant_hashes(entries: Iterable[FileEntry], prefix: str = "build/") -> dict[str, str]:
    """``{variant: hash}`` from a hub listing of ``build/`` (paths are repo-relative)."""
    pairs: dict[str, list[tuple[str, str]]] = {}
    for entry in entries:
        if not entry.path.startswith(prefix):
            continue
        variant, _, rel = entry.path[len(prefix):].partition("/")
        if not rel or not is_locked_path(rel):
            continue
        digest = entry.sha256 or entry.blob_id
        if not digest:
            raise LockError(f"the hub listed {entry.path} without a blob id; cannot lock it")
        pairs.setdefault(variant, []).append((rel, digest))
    return {variant: concat_hash(items) for variant, items in sorted(pairs.items())}


def lfs_paths(entries: Iterable[FileEntry], variant: str) -> list[str]:
    """Paths (inside the variant) whose lock hash is their LFS SHA-256, not their blob id."""
    prefix = f"build/{variant}/"
    return sorted(e.path[len(prefix):] for e in entries
                  if e.path.startswith(prefix) and e.sha256)


def git_blob_id(path: Path) -> str:
    h = hashlib.sha1(usedforsecurity=False)
    h.update(b"blob %d\0" % path.stat().st_size)
    _feed(h, path)
    return h.hexdigest()


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    _feed(h, path)
    return h.hexdigest()


def _feed(h: hashlib._Hash, path: Path) -> None:
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)


def locked_files(variant_dir: Path) -> list[tuple[str, Path]]:
    """Every file the lock hash covers, as ``(relpath, path)``; symlinks to files included."""
    out: list[tuple[str, Path]] = []
    for dirpath, dirnames, filenames in os.walk(variant_dir):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        for name in filenames:
            p = Path(dirpath) / name
            rel = p.relative_to(variant_dir).as_posix()
            if is_locked_path(rel) and p.is_file():
                out.append((rel, p))
    return sorted(out)


def hash_variant_dir(variant_dir: Path, lfs: Collection[str] = ()) -> str:
    """The lock hash of the files on disk; ``lfs`` names files hashed by SHA-256 (LFS)."""
    lfs_set = set(lfs)
    pairs = [(rel, sha256_file(p) if rel in lfs_set else git_blob_id(p))
             for rel, p in locked_files(variant_dir)]
    return concat_hash(pairs)
