"""Cache entries are the user's own: who may have written what the loader reads (issue 24).

Whatever sits in the cache is imported, or decides what is imported (a receipt, a recorded ref,
a variant list, a redirect), so an entry another user could have written is refused: every
entry the loader reads (the repository folder, commit and variant directories, every file of a
variant, receipts, ``variants.json``, ``status.json``, recorded refs, the lock folder) must be

* owned by the current user, or by root (uid 0: root can change your files anyway; this is what
  lets one administrator fill a cache that others only read), and
* not writable by group or others (``chmod go-w``), and not a symbolic link.

Anything else raises :class:`~kernelkit.errors.UnsafeCacheError` (an ``IntegrityError``) naming
the entry, its owner and mode, and nothing is imported. kernelkit itself writes every entry
without group or other write permission (:func:`write_owned`, :func:`make_dirs`,
:func:`seal_modes`), whatever the umask, so its own cache always passes.

This is a check, not a sandbox: it closes the shared-cache attack (another user planting a
variant and a matching receipt), not a race with an attacker who can already write your files.
Light imports (``os``, ``stat``): the warm load path reads its entries through here.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from kernelkit.errors import UnsafeCacheError

FILE_MODE = 0o644
DIR_MODE = 0o755
_GROUP_OTHER_WRITE = stat.S_IWGRP | stat.S_IWOTH


def problem(st: os.stat_result) -> str | None:
    """Why an entry with these (``lstat``) facts must not be trusted; ``None`` if it may."""
    uid = st.st_uid
    if uid != os.geteuid() and uid != 0:
        return f"owned by uid {uid}, not by you (uid {os.geteuid()}) or root"
    if stat.S_ISLNK(st.st_mode):
        return "a symbolic link"
    if st.st_mode & _GROUP_OTHER_WRITE:
        who = " and ".join(w for w, bit in (("group", stat.S_IWGRP), ("others", stat.S_IWOTH))
                           if st.st_mode & bit)
        return f"writable by {who} (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def refuse(path: Path | str, why: str) -> UnsafeCacheError:
    return UnsafeCacheError(path, why)


def check_stat(path: Path | str, st: os.stat_result) -> None:
    why = problem(st)
    if why is not None:
        raise refuse(path, why)


def check_entry(path: Path) -> bool:
    """``lstat`` ``path`` and raise if it is unsafe; ``False`` if it does not exist."""
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    check_stat(path, st)
    return True


def read_owned(path: Path) -> bytes | None:
    """The bytes of the cache file ``path`` after checking who owns it (``None``: missing).
    Opened without following a symbolic link, checked on the open file (no race)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError:  # ELOOP: the last component is a symbolic link
        if os.path.islink(path):
            raise refuse(path, "a symbolic link") from None
        raise
    try:
        st = os.fstat(fd)
        check_stat(path, st)
        if not stat.S_ISREG(st.st_mode):
            raise refuse(path, "not a regular file")
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def make_dirs(path: Path) -> None:
    """``mkdir -p`` with mode 755 (minus the umask) at every level it creates: never writable by
    group or others (``os.makedirs`` gives the parents ``0o777`` minus the umask, group-writable
    under the common ``002`` umask)."""
    missing = []
    probe = path
    while not probe.is_dir():
        missing.append(probe)
        if probe.parent == probe:
            break
        probe = probe.parent
    for directory in reversed(missing):
        try:
            directory.mkdir(mode=DIR_MODE)
        except FileExistsError:  # made meanwhile by another process
            if not directory.is_dir():
                raise


def write_owned(path: Path, data: bytes) -> None:
    """Atomically write the cache file ``path`` (mode 644, folders 755, whatever the umask)."""
    from kernelkit.util.fs import atomic_write_bytes

    make_dirs(path.parent)
    atomic_write_bytes(path, data, mode=FILE_MODE)


def make_lock_file(path: Path) -> None:
    """Create the lock file ``path`` (mode 644) if missing, and check it and its folder: a
    lock another user planted could only stall downloads, but it is refused all the same."""
    make_dirs(path.parent)
    check_entry(path.parent)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE)
    except OSError:
        if os.path.islink(path):
            raise refuse(path, "a symbolic link") from None
        raise
    try:
        check_stat(path, os.fstat(fd))
    finally:
        os.close(fd)


def seal_modes(root: Path) -> None:
    """Remove group and other write permission from ``root`` and everything under it (a
    downloaded variant before it is moved into the cache: the hub's fetch honours the umask)."""
    for directory, dirs, files in os.walk(root):
        for name in (*dirs, *files):
            _drop_write(os.path.join(directory, name))
    _drop_write(os.fspath(root))


def _drop_write(path: str) -> None:
    st = os.lstat(path)
    if not stat.S_ISLNK(st.st_mode) and st.st_mode & _GROUP_OTHER_WRITE:
        os.chmod(path, stat.S_IMODE(st.st_mode) & ~_GROUP_OTHER_WRITE)

