"""A cheap fingerprint of a local git repository's branches and tags: no git process.

The loader records a listing of a repository's refs in its cache; while the repository's
*stamp* is what it was when the listing was taken, the listing is still the hub's answer and a
version lookup needs no ``git`` (``kernelkit.loader.resolve``). The stamp covers everything git
changes when a branch or tag moves, appears or goes (the files backend writes ``<ref>.lock``
and renames it over the ref, or rewrites ``packed-refs`` the same way): the ``lstat`` facts
(inode, size, mtime, ctime) of ``packed-refs`` and of every directory and file under
``refs/heads`` and ``refs/tags``. ``ctime`` cannot be set from user space.

Racy stamps (as git's own "racy clean" index entries): a timestamp is only as fine as the file
system's clock tick, so a change within the tick of the last one could leave the stamp as it
was. A stamp with any timestamp less than :data:`RACY_S` old is therefore not given (``None``:
list again), and the loader takes the stamp *before* it lists. A repository with the
``reftable`` backend has no stamp (always listed).

Only a hub that reads a directory has a stamp; a git remote or the Hugging Face Hub has none
(their refs are only known by asking). Light imports: the loader's warm path uses this.
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

RACY_S = 2.0  # timestamps younger than this do not make a stamp


def repo_git_dir(root: Path, repo_id: str) -> Path:
    """Where a directory hub keeps ``org/name``: ``<root>/<org>/<name>.git`` (the caller has
    checked the id)."""
    org, name = repo_id.split("/", 1)
    return root / org / f"{name}.git"


def local_refs_stamp(root: Path, repo_id: str, *, now: float | None = None) -> str | None:
    """The stamp of ``repo_id`` in the directory hub at ``root``; ``None`` if it has none."""
    return git_refs_stamp(repo_git_dir(root, repo_id), now=now)


def git_refs_stamp(git_dir: Path, *, now: float | None = None) -> str | None:
    """The stamp of the bare repository ``git_dir`` (module docstring); ``None`` when the
    repository is missing, uses reftable, or changed less than :data:`RACY_S` ago."""
    if not os.path.isfile(git_dir / "HEAD") or os.path.lexists(git_dir / "reftable"):
        return None
    newest = 0
    facts: list[str] = []
    for path in _stamped_paths(git_dir):
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            facts.append(f"{path}:-")
            continue
        newest = max(newest, st.st_mtime_ns, st.st_ctime_ns)
        facts.append(f"{path}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}")
    limit = (time.time() if now is None else now) - RACY_S
    if newest >= int(limit * 1e9):
        return None
    return hashlib.sha256("\n".join(facts).encode("utf-8", "surrogateescape")).hexdigest()[:32]


def _stamped_paths(git_dir: Path) -> list[str]:
    out = [os.fspath(git_dir / "packed-refs")]
    for top in (git_dir / "refs" / "heads", git_dir / "refs" / "tags"):
        out.append(os.fspath(top))
        pending = [os.fspath(top)]
        while pending:
            try:
                with os.scandir(pending.pop()) as entries:
                    for entry in entries:
                        out.append(entry.path)
                        if entry.is_dir(follow_symlinks=False):
                            pending.append(entry.path)
            except (FileNotFoundError, NotADirectoryError):
                continue
    return out
