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
from typing import Any


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
    """Put directory ``new`` at ``dest``; ``dest`` holds the old or the new tree at every instant.

    Where the kernel offers it, one ``renameat2(RENAME_EXCHANGE)`` swaps the two trees
    atomically. Elsewhere the old tree is renamed aside (``.<name>.old-*``) and the new one in;
    a crash between the two renames leaves ``dest`` missing for a moment, and
    :func:`recover_dir` (called first here, and by readers) puts the old tree back.
    """
    recover_dir(dest)
    if dest.exists() and _exchange(new, dest):
        shutil.rmtree(new, ignore_errors=True)  # ``new`` now holds the old tree
        return
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


def recover_dir(dest: Path) -> None:
    """Undo an interrupted :func:`replace_dir`: ``dest`` missing but an old tree set aside next
    to it is renamed back; set-aside trees are removed once ``dest`` exists."""
    for aside in sorted(dest.parent.glob(f".{dest.name}.old-*")) if dest.parent.is_dir() else []:
        if not dest.exists():
            with contextlib.suppress(OSError):
                os.rename(aside, dest)
                continue
        shutil.rmtree(aside, ignore_errors=True)


def remove_stale_siblings(path: Path, tags: tuple[str, ...]) -> int:
    """Remove ``.<name>.<tag>-*`` siblings of ``path`` (the staging directories of interrupted
    runs). Call only while holding the lock that the writers of ``path`` hold. Returns how many."""
    if not path.parent.is_dir():
        return 0
    n = 0
    for tag in tags:
        for stale in path.parent.glob(f".{path.name}.{tag}-*"):
            if stale.is_dir() and not stale.is_symlink():
                shutil.rmtree(stale, ignore_errors=True)
            else:
                stale.unlink(missing_ok=True)
            n += 1
    return n


def remove_stale_temp_files(path: Path, min_age_s: float = 0.0) -> None:
    """Remove the temporary files :func:`atomic_write_bytes` left for ``path`` when its writer
    was killed, if older than ``min_age_s`` (0: the caller holds the writers' lock)."""
    import time

    now = time.time()
    for tmp in path.parent.glob(f".{glob_escape(path.name)}.*.incomplete"):
        with contextlib.suppress(OSError):
            if now - tmp.lstat().st_mtime >= min_age_s:
                tmp.unlink()


def glob_escape(name: str) -> str:
    import glob

    return glob.escape(name)


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100
_renameat2: Any = None


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths with ``renameat2(RENAME_EXCHANGE)``; ``False`` where the C
    library or the file system does not offer it (the caller falls back to two renames)."""
    global _renameat2
    if _renameat2 is None:
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            fn = libc.renameat2
            fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                           ctypes.c_uint]
            _renameat2 = fn
        except (OSError, AttributeError):
            _renameat2 = False
    if _renameat2 is False:
        return False
    rc = _renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    return bool(rc == 0)


@contextlib.contextmanager
def file_lock(path: Path, *, shared: bool = False) -> Iterator[None]:
    """Hold an advisory lock on ``path`` (created if missing) for the block: exclusive, or
    ``shared`` (any number of shared holders, no exclusive one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


@contextlib.contextmanager
def try_file_lock(path: Path) -> Iterator[bool]:
    """Take an exclusive advisory lock on ``path`` if nobody holds it (shared or exclusive);
    yields whether it was taken (held for the block), never waits."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as fh:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
