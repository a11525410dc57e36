"""The local hub: a directory holding one bare git repository per kernel.

``<root>/<org>/<name>.git`` is created on the first publish. Revisions are real commit ids,
versions real branches (``v1``) and tags (``v1.2.0``); anything git can read can read it
(``git clone <root>/<org>/<name>.git``).

Publishing is atomic: the new tree is built from blobs with plumbing in a temporary index and
the branch moves with one compare-and-swap ``git update-ref``. A crash before that leaves only
unreferenced objects; readers see the old commit or the new one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from kernelkit.errors import HubError, PublishRaceError, RepoNotFoundError, RevisionNotFoundError
from kernelkit.hub.gitrepo import DEFAULT_IDENTITY, ZERO_ID, GitRepo, TreeEntry
from kernelkit.hub.hubid import local_identity
from kernelkit.hub.names import (
    check_publish,
    check_ref_name,
    check_repo_id,
    check_repo_path,
    is_full_commit_id,
    is_hex_prefix,
    is_ref_name,
    normalize_dir,
    under_prefixes,
)
from kernelkit.hub.port import FileEntry, Refs
from kernelkit.hub.refstamp import git_refs_stamp, repo_git_dir
from kernelkit.util.fs import file_lock, remove_stale_siblings

if TYPE_CHECKING:
    from kernelkit.hub.admin import RefChange


class LocalGitHub:
    """A hub backed by a directory of bare git repositories (see module docstring)."""

    def __init__(self, root: Path, *, identity: tuple[str, str] = DEFAULT_IDENTITY) -> None:
        self.root = Path(root)
        self.identity = identity
        self._trees: dict[tuple[str, str], list[TreeEntry]] = {}
        self._repos: dict[str, GitRepo] = {}

    def __repr__(self) -> str:
        return f"LocalGitHub({str(self.root)!r})"

    def __str__(self) -> str:
        """What a person reads (and passes to ``--hub``): the directory."""
        return str(self.root)

    @property
    def hub_identity(self) -> str:
        """``local:<resolved root>`` (see ``kernelkit.hub.hubid``)."""
        return local_identity(self.root)

    @property
    def git_calls(self) -> int:
        """How many git processes this hub has run (for tests and benchmarks)."""
        return sum(r.calls for r in self._repos.values())

    # --- repositories ----------------------------------------------------------------------

    def repo_path(self, repo_id: str) -> Path:
        check_repo_id(repo_id)
        return repo_git_dir(self.root, repo_id)

    def refs_stamp(self, repo_id: str) -> str | None:
        """A fingerprint of the repository's branches and tags, read without git
        (``kernelkit.hub.refstamp``): the loader's recorded listing is current while it
        matches. ``None`` when there is none to give (missing, just changed, reftable)."""
        return git_refs_stamp(self.repo_path(repo_id))

    def repo(self, repo_id: str) -> GitRepo:
        """The repository of ``repo_id`` (it may not exist yet)."""
        if repo_id not in self._repos:
            self._repos[repo_id] = GitRepo(self.repo_path(repo_id), self.identity)
        return self._repos[repo_id]

    def _existing(self, repo_id: str) -> GitRepo:
        repo = self.repo(repo_id)
        if not repo.exists():
            raise RepoNotFoundError(
                repo_id, f"the hub at {self.root}",
                hint=f"publish it first: `kernelkit upload --repo-id {repo_id} --hub {self.root}`",
            )
        return repo

    @staticmethod
    def _init(repo: GitRepo) -> None:
        """Create the repository if missing, first removing what an interrupted (killed)
        creation left behind; under a lock so a live creation is never removed."""
        if repo.exists():
            return
        lock = repo.git_dir.parent / f".{repo.git_dir.name}.init.lock"
        with file_lock(lock):
            remove_stale_siblings(repo.git_dir, ("init",))
            repo.init()

    def repo_exists(self, repo_id: str) -> bool:
        return self.repo(repo_id).exists()

    def list_repos(self) -> list[str]:
        """Every repository id in the hub, sorted."""
        if not self.root.is_dir():
            return []
        return sorted(f"{d.parent.name}/{d.name[:-4]}" for d in self.root.glob("*/*.git")
                      if GitRepo(d).exists())

    # --- reading ---------------------------------------------------------------------------

    def list_refs(self, repo_id: str) -> Refs:
        branches, tags = self._existing(repo_id).refs()
        return Refs(branches=branches, tags=tags)

    def resolve(self, repo_id: str, revision: str) -> str:
        """Branch, then tag, then (short, >= 4 hex, unique) commit id; one git process."""
        repo = self._existing(repo_id)
        names: list[str] = []
        if is_ref_name(revision):
            names += [f"refs/heads/{revision}^{{commit}}", f"refs/tags/{revision}^{{commit}}"]
        if is_hex_prefix(revision):
            names.append(f"{revision}^{{commit}}")
        for found in repo.lookup(names) if names else []:
            if found is not None and found[1] == "commit":
                return found[0]
        raise self._not_found(repo_id, revision)

    def _not_found(self, repo_id: str, revision: str) -> RevisionNotFoundError:
        refs = self.list_refs(repo_id)
        available = [*sorted(refs.branches), *sorted(refs.tags)]
        return RevisionNotFoundError(repo_id, revision, available)

    def _tree(self, repo_id: str, commit: str) -> list[TreeEntry]:
        key = (repo_id, commit)
        if key not in self._trees:
            repo = self._existing(repo_id)
            if not is_full_commit_id(commit):
                commit = self.resolve(repo_id, commit)
                key = (repo_id, commit)
            if key not in self._trees:
                self._trees[key] = repo.ls_tree(commit)
        return self._trees[key]

    def list_files(self, repo_id: str, commit: str, path: str = "") -> list[FileEntry]:
        prefix = normalize_dir(path)
        return [FileEntry(e.path, e.size, e.oid) for e in self._tree(repo_id, commit)
                if not prefix or e.path == prefix or e.path.startswith(prefix + "/")]

    def list_dirs(self, repo_id: str, commit: str, path: str = "build") -> list[str]:
        prefix = normalize_dir(path)
        start = len(prefix) + 1 if prefix else 0
        names = {e.path[start:].split("/", 1)[0] for e in self._tree(repo_id, commit)
                 if e.path.startswith(prefix + "/" if prefix else "") and "/" in e.path[start:]}
        return sorted(names)

    def read_file(self, repo_id: str, commit: str, path: str) -> bytes | None:
        return self._existing(repo_id).cat_blob(f"{commit}:{check_repo_path(path)}")

    def fetch(self, repo_id: str, commit: str, paths: list[str], dest: Path) -> None:
        """All ``paths`` in one ``git cat-file --batch`` process; each file written atomically."""
        repo = self._existing(repo_id)
        items = [(check_repo_path(p), Path(dest) / p) for p in paths]
        if items:
            repo.write_blobs(commit, items)

    # --- writing ---------------------------------------------------------------------------

    def publish(self, repo_id: str, branch: str, files: Mapping[str, Path], *,
                delete_prefixes: tuple[str, ...] = (),
                message: str = "Upload with kernelkit") -> str:
        check_publish(branch, files)
        repo = self.repo(repo_id)
        self._init(repo)
        old, new = self.build_commit(repo, branch, files, delete_prefixes, message)
        if new == old:
            return new
        why = repo.update_ref(f"refs/heads/{branch}", new, old, message)
        if why is not None:
            raise PublishRaceError(
                f"publish to {repo_id} branch {branch} lost a race: the branch moved "
                f"while this upload was being prepared ({why})",
                hint="another upload finished first; run the upload again",
            )
        return new

    def publish_tagged(self, repo_id: str, branch: str, files: Mapping[str, Path], *, tag: str,
                       delete_prefixes: tuple[str, ...] = (),
                       message: str = "Upload with kernelkit") -> str:
        """:meth:`publish` and :meth:`tag` in one ``git update-ref --stdin`` transaction: the
        branch and its tag appear together or not at all (never a branch without its tag)."""
        check_publish(branch, files)
        check_ref_name(tag, "tag")
        repo = self.repo(repo_id)
        self._init(repo)
        old, new = self.build_commit(repo, branch, files, delete_prefixes, message)
        current = repo.lookup([f"refs/tags/{tag}^{{commit}}"])[0]
        if current is not None and current[0] == new and new == old:
            return new  # already published and tagged
        if current is not None and current[0] != new:
            raise _tag_moved(repo_id, tag, current[0])
        lines = [] if new == old else [f"update refs/heads/{branch} {new} {old or ZERO_ID}"]
        if current is None:
            lines.append(f"create refs/tags/{tag} {new}")
        proc = repo.git("update-ref", "-m", message, "--stdin",
                        input="".join(f"{line}\n" for line in lines).encode(), check=False)
        if proc.returncode != 0:
            raise PublishRaceError(
                f"publish to {repo_id} branch {branch} with tag {tag} lost a race: the branch "
                f"or tag moved while this upload was being prepared "
                f"({proc.stderr.decode(errors='replace').strip()})",
                hint="another upload finished first; nothing of this one was published; "
                     "run the upload again",
            )
        return new

    def build_commit(self, repo: GitRepo, branch: str, files: Mapping[str, Path],
                     delete_prefixes: tuple[str, ...], message: str) -> tuple[str | None, str]:
        """Write the objects of the next commit of ``branch`` without moving any ref.

        Returns ``(old, new)``; ``new == old`` when the tree would not change."""
        found = repo.lookup([f"refs/heads/{branch}^{{commit}}", f"refs/heads/{branch}^{{tree}}"])
        old = found[0][0] if found[0] else None
        old_tree = found[1][0] if found[1] else None
        tree = repo.next_tree(old, files, lambda path: under_prefixes(path, delete_prefixes))
        if old is not None and tree == old_tree:
            return old, old
        return old, repo.commit_tree(tree, old, message)

    def update_refs(self, repo_id: str, changes: Sequence[RefChange], *,
                    message: str = "kernelkit") -> None:
        """Apply ``changes`` (``hub/admin.py``) in one ``git update-ref --stdin`` transaction,
        each ref compared with its ``old`` commit: all of them or none
        (``PublishRaceError`` when a ref moved meanwhile)."""
        repo = self._existing(repo_id)
        raw = self._raw_oids(repo, [c.ref for c in changes])
        lines = []
        for c in changes:
            if (c.old is None) == (c.ref in raw):
                raise PublishRaceError(f"{c.kind} {c.name} of {repo_id} "
                                       f"{'exists' if c.old is None else 'is gone'}",
                                       hint="another process changed it; nothing was changed")
            old = raw.get(c.ref, ZERO_ID)
            if c.old is not None and raw.get(c.ref) != c.old and not self._peels_to(
                    repo, c.ref, c.old):
                raise PublishRaceError(f"{c.kind} {c.name} of {repo_id} moved",
                                       hint="another process changed it; nothing was changed")
            lines.append(f"delete {c.ref} {old}" if c.new is None
                         else f"update {c.ref} {c.new} {old}")
        proc = repo.git("update-ref", "-m", message, "--stdin",
                        input="".join(f"{line}\n" for line in lines).encode(), check=False)
        self._trees.clear()
        if proc.returncode != 0:
            raise PublishRaceError(
                f"changing the refs of {repo_id} lost a race "
                f"({proc.stderr.decode(errors='replace').strip()})",
                hint="another process changed them first; nothing was changed; run it again")

    @staticmethod
    def _raw_oids(repo: GitRepo, refs: Sequence[str]) -> dict[str, str]:
        """Each existing ref's own object id (an annotated tag's, not its commit's)."""
        out = repo.git("for-each-ref", "--format=%(refname)%00%(objectname)",
                       *refs).stdout.decode()
        return {ref: oid for ref, oid in (line.split("\0") for line in out.splitlines())
                if ref in refs}

    @staticmethod
    def _peels_to(repo: GitRepo, ref: str, commit: str) -> bool:
        found = repo.lookup([f"{ref}^{{commit}}"])[0]
        return found is not None and found[0] == commit

    def tag(self, repo_id: str, tag: str, commit: str) -> None:
        check_ref_name(tag, "tag")
        repo = self._existing(repo_id)
        target = self.resolve(repo_id, commit)
        why = repo.update_ref(f"refs/tags/{tag}", target, None, f"tag {tag}")
        if why is None:
            return
        current = repo.lookup([f"refs/tags/{tag}^{{commit}}"])[0]
        if current is not None and current[0] == target:
            return
        raise _tag_moved(repo_id, tag, current[0] if current else "another object")


def _tag_moved(repo_id: str, tag: str, target: str) -> HubError:
    return HubError(
        f"tag {tag} of {repo_id} already points to {target}; tags never move",
        hint="publish a new version tag (e.g. bump the patch number) instead",
    )
