"""``kernelkit cache ls|rm|prune``: what the loader's cache holds, and removing from it safely.

:func:`list_cache` reads the layout of ``cache.py`` into values (every repository folder with
its hub, each cached commit with the refs that point to it, each variant with its size).
:func:`plan_rm` and :func:`plan_prune` turn a listing into :class:`Removal` values (printable,
``--dry-run``); :func:`execute` carries them out.

Safety: a download holds its repository folder's ``.locks/repo.lock`` shared for as long as it
writes (``install.ensure_variant``); :func:`execute` takes it exclusively and without waiting,
so it never deletes what another process is installing: a folder that is busy is skipped and
reported. What is removed is first renamed aside (``.<name>.rm-<random>``), so a reader sees
the variant whole or not at all; a later load downloads it again (offline: ``OfflineError``).
A process that already imported a variant keeps running; one importing it at the very moment
it is removed may fail and should retry.

``prune`` removes what no ref points to any more (a commit that ``v1`` or a tag used to name,
one loaded by commit id: "detached", as ``hf cache prune``), commits pinned by the lock files
it is told to keep excepted, and what interrupted downloads left behind.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path

from kernelkit.errors import KernelNotFoundError
from kernelkit.loader.cache import RECORD, REF_KINDS, REPO_LOCK, RepoCache
from kernelkit.util.fs import temp_sibling, try_file_lock

_FOLDER_RE = re.compile(r".+--[0-9a-f]{16}\Z")
_LEFTOVER_RE = re.compile(r"\..+\.(fetch|old|rm|work)-[0-9a-f]{12}\Z|\..+\.incomplete\Z")


@dataclass(frozen=True)
class CachedVariant:
    name: str
    size: int
    verified: bool  # a verification receipt is present (loads without hashing again)
    built_locally: bool = False  # built here from the published sources (<commit>/local/)

    @property
    def folder(self) -> str:
        """Where it lives under its commit: ``build`` (downloaded) or ``local`` (built here)."""
        return "local" if self.built_locally else "build"


@dataclass(frozen=True)
class CachedRevision:
    commit: str
    refs: tuple[str, ...]  # branch/tag names that pointed to it when last seen online
    size: int
    variants: tuple[CachedVariant, ...]


@dataclass(frozen=True)
class CachedRepo:
    folder: Path
    repo_id: str
    hub: str | None  # the hub identity; None: a folder from before kernelkit recorded it
    size: int
    revisions: tuple[CachedRevision, ...]


@dataclass(frozen=True)
class CacheListing:
    cache_dir: Path
    repos: tuple[CachedRepo, ...]

    @property
    def size(self) -> int:
        return sum(r.size for r in self.repos)


@dataclass(frozen=True)
class Removal:
    """One thing to delete: a repository folder, a commit, a variant, or a leftover."""

    folder: Path
    repo_id: str
    path: Path
    size: int
    what: str  # repository | revision | variant | leftover
    commit: str | None = None
    variant: str | None = None
    reason: str = "asked"  # asked | detached | leftover
    locked: bool = True  # under the folder's lock; False: a set-aside folder nobody writes


@dataclass
class RemovalResult:
    removed: list[Removal] = field(default_factory=list)
    busy: list[Removal] = field(default_factory=list)  # another process was installing

    @property
    def freed(self) -> int:
        return sum(r.size for r in self.removed)


# --- listing --------------------------------------------------------------------------------


def tree_size(path: Path) -> int:
    """Bytes of the regular files under ``path`` (symlinks not followed; vanished files 0)."""
    if path.is_file():
        return path.lstat().st_size
    total = 0
    for dirpath, _, filenames in os.walk(path, followlinks=False):
        for name in filenames:
            try:
                st = os.lstat(os.path.join(dirpath, name))
            except OSError:
                continue
            total += st.st_size if not os.path.islink(os.path.join(dirpath, name)) else 0
    return total


def list_cache(cache_dir: Path) -> CacheListing:
    """Every repository folder under ``cache_dir`` (sorted by repository id and hub)."""
    try:
        names = sorted(os.listdir(cache_dir))
    except (FileNotFoundError, NotADirectoryError):
        names = []
    repos = [_read_folder(cache_dir / n) for n in names
             if _FOLDER_RE.fullmatch(n) and (cache_dir / n).is_dir()]
    return CacheListing(cache_dir, tuple(sorted(repos, key=lambda r: (r.repo_id, r.hub or ""))))


def _read_folder(folder: Path) -> CachedRepo:
    repo_id, hub = read_identity(folder)
    rc = RepoCache(folder, repo_id, hub or "(unknown hub)")
    refs: dict[str, list[str]] = {}
    for kind in REF_KINDS:
        for name, commit in sorted(rc.refs(kind).items()):
            if name not in refs.setdefault(commit, []):
                refs[commit].append(name)
    revisions = tuple(_read_revision(rc, c, tuple(refs.get(c, ()))) for c in rc.commits())
    return CachedRepo(folder, repo_id, hub, tree_size(folder), revisions)


def read_identity(folder: Path) -> tuple[str, str | None]:
    """``(repo id, hub identity)`` of a cache folder (``repo.json``; the hub ``None`` when the
    record is missing: the id is then read from the folder's name)."""
    try:
        data = json.loads((folder / RECORD).read_text())
        if isinstance(data.get("repo_id"), str) and isinstance(data.get("hub"), str):
            return data["repo_id"], data["hub"]
    except (OSError, ValueError, AttributeError):
        pass
    readable = folder.name[:-18]  # "<org>--<name>" then "--<16 hex>"
    org, _, name = readable.partition("--")
    return f"{org}/{name}" if name else readable, None


def _read_revision(rc: RepoCache, commit: str, refs: tuple[str, ...]) -> CachedRevision:
    variants = []
    for folder, receipt in (("build", rc.receipt_path), ("local", rc.local_receipt_path)):
        where = rc.commit_dir(commit) / folder
        try:
            names = sorted(n for n in os.listdir(where) if not n.startswith(".")
                           and (where / n).is_dir())
        except (FileNotFoundError, NotADirectoryError):
            names = []
        variants += [CachedVariant(n, tree_size(where / n), receipt(commit, n).is_file(),
                                   built_locally=folder == "local") for n in names]
    return CachedRevision(commit, refs, tree_size(rc.commit_dir(commit)), tuple(variants))


# --- planning -------------------------------------------------------------------------------


def plan_rm(listing: CacheListing, repo_id: str, *, revision: str | None = None,
            variant: str | None = None, hub: str | None = None) -> list[Removal]:
    """What ``kernelkit cache rm`` removes: ``repo_id``'s folders (of ``hub`` only, an identity,
    when given); only the commit ``revision`` names (a commit id or prefix, or a cached branch
    or tag name) when given; only the variants matching the fnmatch pattern ``variant`` when
    given. ``KernelNotFoundError`` when nothing cached matches."""
    repos = [r for r in listing.repos if r.repo_id == repo_id and (hub is None or r.hub == hub)]
    out: list[Removal] = []
    for repo in repos:
        revs = [r for r in repo.revisions if revision is None or _names(r, revision)]
        if revision is None and variant is None:
            out.append(Removal(repo.folder, repo_id, repo.folder, repo.size, "repository"))
            continue
        for rev in revs:
            if variant is None:
                out.append(Removal(repo.folder, repo_id, repo.folder / rev.commit, rev.size,
                                   "revision", rev.commit))
                continue
            out += [Removal(repo.folder, repo_id, repo.folder / rev.commit / v.folder / v.name,
                            v.size, "variant", rev.commit, v.name)
                    for v in rev.variants if fnmatchcase(v.name, variant)]
    if not out:
        raise KernelNotFoundError(
            f"nothing cached matches {_describe(repo_id, revision, variant, hub)} in "
            f"{listing.cache_dir}",
            hint="`kernelkit cache ls` lists what the cache holds")
    return out


def _names(rev: CachedRevision, revision: str) -> bool:
    lowered = revision.lower()
    return revision in rev.refs or (len(lowered) >= 4 and rev.commit.startswith(lowered))


def _describe(repo_id: str, revision: str | None, variant: str | None, hub: str | None) -> str:
    what = repo_id + (f"@{revision}" if revision else "") + (f" {variant}" if variant else "")
    return what + (f" (hub {hub})" if hub else "")


def plan_prune(listing: CacheListing,
               keep: Iterable[tuple[str, str]] = ()) -> list[Removal]:
    """What ``kernelkit cache prune`` removes: commits no cached ref points to, except the
    ``(repo_id, commit)`` pairs in ``keep``, and leftovers of interrupted downloads or removals."""
    kept = set(keep)
    out: list[Removal] = []
    for repo in listing.repos:
        detached = {rev.commit: rev for rev in repo.revisions
                    if not rev.refs and (repo.repo_id, rev.commit) not in kept}
        out += [Removal(repo.folder, repo.repo_id, repo.folder / c, rev.size, "revision", c,
                        reason="detached") for c, rev in detached.items()]
        out += [Removal(repo.folder, repo.repo_id, p, tree_size(p), "leftover", reason="leftover")
                for p in _leftovers(repo.folder) if not _inside(p, repo.folder, set(detached))]
    # a repository folder set aside by a removal that was killed before it finished
    out += [Removal(listing.cache_dir, "", p, tree_size(p), "leftover", reason="leftover",
                    locked=False) for p in _top_leftovers(listing.cache_dir)]
    return out


def _top_leftovers(cache_dir: Path) -> list[Path]:
    try:
        names = sorted(os.listdir(cache_dir))
    except (FileNotFoundError, NotADirectoryError):
        return []
    return [cache_dir / n for n in names if _LEFTOVER_RE.fullmatch(n) and ".rm-" in n]


def _leftovers(folder: Path) -> Iterator[Path]:
    """Staging and set-aside trees, and temporary files, anywhere in ``folder``."""
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        for name in [*dirnames, *filenames]:
            if _LEFTOVER_RE.fullmatch(name):
                yield Path(dirpath) / name
        dirnames[:] = [d for d in dirnames if not _LEFTOVER_RE.fullmatch(d)]


def _inside(path: Path, folder: Path, commits: set[str]) -> bool:
    rel = path.relative_to(folder).parts
    return bool(rel) and rel[0] in commits


# --- removing -------------------------------------------------------------------------------


def execute(plan: list[Removal]) -> RemovalResult:
    """Carry out ``plan``, one repository folder at a time, each under its exclusive lock; a
    folder another process is downloading into is skipped (``RemovalResult.busy``)."""
    result = RemovalResult()
    by_folder: dict[Path, list[Removal]] = {}
    for item in plan:
        by_folder.setdefault(item.folder, []).append(item)
    for folder, items in by_folder.items():
        with ExitStack() as stack:
            locked = any(i.locked for i in items)
            if locked and not stack.enter_context(try_file_lock(folder / ".locks" / REPO_LOCK)):
                result.busy += items
                continue
            for item in items:
                _remove(item)
                result.removed.append(item)
    return result


def _remove(item: Removal) -> None:
    if item.what == "variant" and item.commit is not None and item.variant is not None:
        receipt = item.path.parent / f".{item.variant}.receipt"
        receipt.unlink(missing_ok=True)  # first: a reader re-verifies, never trusts a half tree
        for record in (".kksig", ".sigcheck"):  # the signature records (loader/signatures.py)
            (item.path.parent / f".{item.variant}{record}").unlink(missing_ok=True)
    if item.path.is_dir() and not item.path.is_symlink():
        aside = temp_sibling(item.path, "rm")
        try:
            os.replace(item.path, aside)
        except FileNotFoundError:
            return
        shutil.rmtree(aside, ignore_errors=True)
    else:
        item.path.unlink(missing_ok=True)

