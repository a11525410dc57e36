"""Atomic file and directory writes, and an advisory file lock.

Write into a temporary sibling, then ``os.replace`` into place: a crash never leaves a
half-written file. Locks only save duplicate work; the rename keeps things correct.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_bytes(path: Path, data: bytes, mode: int = 0o666) -> None:
    """Write ``data`` to ``path`` via a temporary sibling; permissions as a plain open() gives
    (``mode`` minus the umask), not mkstemp's private 0600."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".incomplete", dir=path.parent)
    try:
        os.fchmod(fd, mode & ~_umask())
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def temp_sibling(path: Path, tag: str = "tmp") -> Path:
    """A fresh, not-yet-existing path next to ``path`` (same filesystem, so renames are atomic)."""
    return path.parent / f".{path.name}.{tag}-{uuid.uuid4().hex[:12]}"


def replace_dir(new: Path, dest: Path) -> None:
    """Put directory ``new`` at ``dest``, replacing what was there with two renames.

    ``dest`` always holds either the old or the new tree; the old one is removed afterwards.
    """
    old: Path | None = None
    if dest.exists():
        old = temp_sibling(dest, "old")
        os.replace(dest, old)
    try:
        os.replace(new, dest)
    except BaseException:
        if old is not None:
            os.replace(old, dest)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive advisory lock on ``path`` (created if missing) for the block."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
