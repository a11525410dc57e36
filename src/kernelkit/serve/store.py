"""The server's view of a hub directory: what the Hub API endpoints read and write.

Built on :class:`~kernelkit.hub.local.LocalGitHub` and :class:`~kernelkit.hub.gitrepo.GitRepo`
(the same bare repositories ``kernelkit upload --hub DIR`` writes); this module adds what the
Hub API has and the local hub does not: pull-request refs (``refs/pr/<n>``), directories in tree
listings, a repository's visibility, and blob files on disk so downloads can be streamed and
served with byte ranges.

Every method is synchronous (it runs git) and safe to call from several threads: refs move
only through compare-and-swap ``update-ref``, blobs are written to a temporary sibling and
renamed, and the in-memory caches hold immutable values keyed by commit or blob id.
"""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from kernelkit.errors import RefConflict, RevisionNotFoundError
from kernelkit.hub.gitrepo import GitRepo, split_refs
from kernelkit.hub.local import LocalGitHub
from kernelkit.hub.names import (
    check_ref_name,
    check_repo_path,
    is_full_commit_id,
    is_hex_prefix,
    is_ref_name,
)
from kernelkit.serve.fields import FULL_REF, PR_REF
from kernelkit.util.fs import atomic_write_text

_HUB_DATE = "%Y-%m-%dT%H:%M:%S.000Z"  # the Hub's date format (huggingface_hub parses it)
SETTINGS_FILE = "kernelkit-serve.json"  # inside the bare repository: visibility
_TREE_CACHE = 256


@dataclass(frozen=True)
class Entry:
    """One tree entry at a commit: a file (``blob``) or a directory (``tree``)."""

    path: str
    kind: str  # "blob" or "tree"
    oid: str
    size: int


@dataclass(frozen=True)
class CommitInfo:
    """One commit as ``list_repo_commits`` reads it (``date``: UTC, the Hub's format)."""

    oid: str
    author: str
    date: str
    title: str
    message: str


@dataclass(frozen=True)
class RefsInfo:
    branches: dict[str, str]
    tags: dict[str, str]
    pulls: dict[str, str]  # "refs/pr/1" -> commit


class Store:
    """The repositories under ``root`` as the Hub API sees them."""

    def __init__(self, root: Path, blob_dir: Path | None = None, *,
                 ref_ttl: float = 1.0) -> None:
        self.hub = LocalGitHub(Path(root))
        self.root = self.hub.root
        self.blob_dir = blob_dir or self.root / ".kernelkit-serve" / "blobs"
        self.ref_ttl = ref_ttl
        self._trees: OrderedDict[tuple[str, str], list[Entry]] = OrderedDict()
        self._resolved: dict[tuple[str, str], tuple[str, float]] = {}
        self._flights: dict[tuple[str, str], threading.Lock] = {}
        self._lock = threading.Lock()

    # --- repositories ----------------------------------------------------------------------

    def repo(self, repo_id: str) -> GitRepo:
        """The repository (``check_repo_id`` validates the id: no escape from ``root``)."""
        return GitRepo(self.hub.repo_path(repo_id), self.hub.identity)

    def exists(self, repo_id: str) -> bool:
        return self.repo(repo_id).exists()

    def is_private(self, repo_id: str) -> bool:
        try:
            data = json.loads((self.repo(repo_id).git_dir / SETTINGS_FILE).read_text())
        except (FileNotFoundError, ValueError):
            return False
        return bool(isinstance(data, dict) and data.get("private"))

    def create(self, repo_id: str, *, private: bool) -> bool:
        """Create the repository with an initial, empty commit on ``main`` (the Hub's holds a
        ``.gitattributes`` for LFS, which this server does not use); ``False`` if it existed."""
        repo = self.repo(repo_id)
        if repo.exists():
            return False
        repo.init()
        if private:
            atomic_write_text(repo.git_dir / SETTINGS_FILE, json.dumps({"private": True}))
        tree = repo.write_tree([])
        commit = repo.commit_tree(tree, None, "initial commit")
        repo.update_ref("refs/heads/main", commit, None, "create repository")
        return True

    # --- refs ------------------------------------------------------------------------------

    def refs(self, repo_id: str) -> RefsInfo:
        table = self.repo(repo_id).ref_table("refs/heads", "refs/tags", "refs/pr")
        branches, tags = split_refs(table)
        pulls = {r: c for r, c in table.items() if PR_REF.match(r)}
        return RefsInfo(branches, tags, pulls)

    def resolve(self, repo_id: str, revision: str, *, fresh: bool = False) -> str:
        """Branch, tag, ``refs/heads/<b>``, ``refs/tags/<t>``, ``refs/pr/<n>`` or (short)
        commit id -> full commit id.

        A name resolved less than ``ref_ttl`` seconds ago is answered from memory (reads only:
        writes pass ``fresh=True``, and every write through this server forgets the repository's
        names at once; a ref moved by another process is seen within ``ref_ttl``)."""
        key = (repo_id, revision)
        if not fresh:
            hit = self._cached(key)
            if hit is not None:
                return hit
        with self._lock:
            flight = self._flights.setdefault(key, threading.Lock())
        with flight:  # concurrent readers of an expired name wait for one git process
            hit = None if fresh else self._cached(key)
            if hit is not None:
                return hit
            now = time.monotonic()
            commit = self._resolve(repo_id, revision)
            with self._lock:
                if len(self._resolved) > 4096:
                    self._resolved.clear()
                    self._flights.clear()
                self._resolved[key] = (commit, now)
        return commit

    def _cached(self, key: tuple[str, str]) -> str | None:
        with self._lock:
            hit = self._resolved.get(key)
        if hit is not None and time.monotonic() - hit[1] < self.ref_ttl:
            return hit[0]
        return None

    def forget(self, repo_id: str) -> None:
        with self._lock:
            for key in [k for k in self._resolved if k[0] == repo_id]:
                del self._resolved[key]

    def _resolve(self, repo_id: str, revision: str) -> str:
        if PR_REF.match(revision) or FULL_REF.match(revision):  # exactly that ref
            found = self.repo(repo_id).lookup([f"{revision}^{{commit}}"])[0]
            if found is not None and found[1] == "commit":
                return found[0]
            raise RevisionNotFoundError(repo_id, revision, [])
        if not (is_ref_name(revision) or is_hex_prefix(revision)):
            raise RevisionNotFoundError(repo_id, revision, [])
        if is_full_commit_id(revision):
            with self._lock:
                if (repo_id, revision) in self._trees:
                    return revision  # listed before in this repository: it exists (immutable)
        return self.hub.resolve(repo_id, revision)

    # --- trees and blobs -------------------------------------------------------------------

    def tree(self, repo_id: str, commit: str) -> list[Entry]:
        """Every file and directory at ``commit`` (recursively), sorted by path; cached."""
        key = (repo_id, commit)
        with self._lock:
            if key in self._trees:
                self._trees.move_to_end(key)
                return self._trees[key]
        raw = self.repo(repo_id).git("ls-tree", "-r", "-t", "-l", "-z", "--full-tree",
                                     commit).stdout
        entries = []
        for rec in raw.split(b"\0"):
            if rec:
                meta, _, path = rec.partition(b"\t")
                _mode, kind, oid, size = meta.decode().split()
                if kind in ("blob", "tree"):
                    entries.append(Entry(path.decode(), kind, oid,
                                         int(size) if size.isdigit() else 0))
        entries.sort(key=lambda e: e.path)
        with self._lock:
            self._trees[key] = entries
            while len(self._trees) > _TREE_CACHE:
                self._trees.popitem(last=False)
        return entries

    def commits(self, repo_id: str, commit: str, skip: int, count: int) -> list[CommitInfo]:
        """``count`` commits of the history of ``commit``, newest first, after ``skip``."""
        raw = self.repo(repo_id).git(
            "log", "-z", f"--skip={skip}", f"-n{count}", f"--date=format-local:{_HUB_DATE}",
            "--format=%H%n%an%n%cd%n%B", commit, "--", env={"TZ": "UTC"}).stdout
        out = []
        for rec in raw.decode("utf-8", "replace").split("\0"):
            if rec:
                oid, author, date, body = [*rec.split("\n", 3), "", "", ""][:4]
                title, _, message = body.strip().partition("\n")
                out.append(CommitInfo(oid, author, date, title, message.strip()))
        return out

    def entry(self, repo_id: str, commit: str, path: str) -> Entry | None:
        check_repo_path(path)
        return next((e for e in self.tree(repo_id, commit) if e.path == path), None)

    def blob_file(self, repo_id: str, commit: str, entry: Entry) -> Path:
        """The blob as a plain file on disk (written once, atomically, then reused: blob ids
        are content addresses), so it can be streamed in chunks with byte ranges."""
        target = self.blob_dir / entry.oid[:2] / entry.oid
        if not target.is_file():
            self.repo(repo_id).write_blobs(commit, [(entry.path, target)])
        return target

    # --- writing ---------------------------------------------------------------------------

    def create_ref(self, repo_id: str, ref: str, commit: str, what: str) -> None:
        """Create ``ref`` at ``commit``; ``RefConflict`` if it exists."""
        why = self.repo(repo_id).update_ref(ref, commit, None, f"create {what}")
        self.forget(repo_id)
        if why is not None:
            raise RefConflict(f"{what} already exists in {repo_id}")

    def create_branch(self, repo_id: str, branch: str, start: str | None) -> None:
        check_ref_name(branch, "branch")
        self.create_ref(repo_id, f"refs/heads/{branch}",
                        self.resolve(repo_id, start or "main", fresh=True), f"branch {branch}")

    def create_tag(self, repo_id: str, tag: str, revision: str) -> None:
        check_ref_name(tag, "tag")
        self.create_ref(repo_id, f"refs/tags/{tag}", self.resolve(repo_id, revision, fresh=True),
                        f"tag {tag}")

    def delete_ref(self, repo_id: str, ref: str, what: str) -> None:
        """Delete ``ref`` (a branch other than ``main``, or a tag); ``RefConflict`` if it does
        not exist."""
        repo = self.repo(repo_id)
        proc = repo.git("update-ref", "-m", f"delete {what}", "-d", ref, check=False)
        self.forget(repo_id)
        if proc.returncode != 0 or repo.lookup([ref])[0] is not None:
            raise RefConflict(f"cannot delete {what} of {repo_id}: "
                              f"{proc.stderr.decode(errors='replace').strip() or 'it remains'}")

    def next_pr(self, repo_id: str) -> str:
        nums = [int(m.group(1)) for r in self.refs(repo_id).pulls if (m := PR_REF.match(r))]
        return f"refs/pr/{max(nums, default=0) + 1}"

    def commit(self, repo_id: str, ref: str, parent: str, files: Mapping[str, Path],
               deleted_files: set[str], deleted_dirs: set[str], message: str) -> str:
        """Write a commit on top of ``parent`` and move ``ref`` from ``parent`` to it
        (compare-and-swap). The tree is built by the hub's one tree builder
        (``GitRepo.next_tree``): a path that would be both a file and a directory is
        ``TreeClashError``, never a silently dropped file. ``RefConflict`` if ``ref`` moved."""
        repo = self.repo(repo_id)

        def drop(path: str) -> bool:
            return path in deleted_files or any(path.startswith(d + "/") for d in deleted_dirs)

        tree = repo.next_tree(parent, files, drop)
        new = repo.commit_tree(tree, parent, message)
        why = repo.update_ref(ref, new, parent, message.splitlines()[0] if message else "")
        self.forget(repo_id)
        if why is not None:
            raise RefConflict(f"{ref} of {repo_id} moved while this commit was written")
        return new
