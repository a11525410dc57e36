"""The hub port: the one small interface every hub backend implements.

Backends: ``local.LocalGitHub`` (a directory of git repositories, the embedded default and the
test double), ``git`` remotes, and the Hugging Face Hub through ``huggingface_hub``.
Revisions are immutable commit ids once resolved; versions are branches (``v1``) and semver
tags (``v1.2.0``).

Cost of each call (what the loader may rely on; "remote" = a network round trip for the git-remote
and Hugging Face backends, a local ``git`` process for ``LocalGitHub``):

=====================  ==========================================================================
``repo_exists``        cheap: a ``stat`` (local); one remote call otherwise
``list_refs``          one git process / one remote call
``resolve``            one git process / one remote call; a full commit id already known locally
                       costs no remote call (git remote mirror)
``list_files``         one git process per commit, then cached in memory for the hub object
                       (commits are immutable); Hugging Face: one (paginated) tree listing
``list_dirs``          served from the same cache as ``list_files`` (local/git); Hugging Face: one
                       non-recursive tree listing, much cheaper than a recursive one
``read_file``          one git process / one download
``fetch``              one git process for *all* paths (``git cat-file --batch``); Hugging Face:
                       one ``snapshot_download`` with the paths as allow-patterns
``publish``/``tag``    a handful of git processes (about 7); never on the loader's path
=====================  ==========================================================================

Errors: an unknown repository raises ``HubError``; an unknown branch/tag/commit
``RevisionNotFoundError``; a path missing at a commit in ``fetch`` ``HubError``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable


@dataclass(frozen=True)
class Refs:
    """Branches and tags of a repository, each mapped to its full commit id."""

    branches: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class FileEntry:
    """A file in a repository at a commit.

    ``blob_id`` is the git blob id (SHA-1 hex of ``"blob <len>\\0" + data``) and ``sha256`` the
    hex SHA-256 of the content where the backend knows it (LFS files on the Hugging Face Hub);
    the lock hash (upstream-loader.md §3.2) uses ``sha256`` when set, else ``blob_id``.
    """

    path: str
    size: int
    blob_id: str
    sha256: str | None = None


@runtime_checkable
class Hub(Protocol):
    """What the loader and the publisher need from a hub. All paths are POSIX, repo-relative."""

    @property
    def hub_identity(self) -> str:
        """A stable string naming this hub (``kernelkit.hub.hubid``): ``local:<resolved root>``,
        ``git:<url>`` or ``hf:<endpoint>``. Computed without any network call; the loader keys
        its cache by it, so two hubs never share cached refs or commits. Two hub objects with
        the same identity must serve the same repositories."""
        ...

    def list_refs(self, repo_id: str) -> Refs:
        """Branches and tags; raise ``HubError`` if the repository does not exist."""
        ...

    def resolve(self, repo_id: str, revision: str) -> str:
        """Branch, tag, or (short) commit id -> full commit id; ``RevisionNotFoundError``."""
        ...

    def list_files(self, repo_id: str, commit: str, path: str = "") -> list[FileEntry]:
        """Every file under ``path`` (recursively) at ``commit``."""
        ...

    def fetch(self, repo_id: str, commit: str, paths: list[str], dest: Path) -> None:
        """Write each of ``paths`` at ``commit`` to ``dest/<path>``."""
        ...

    # ``publish``: ``delete_prefixes`` are plain string prefixes of repo paths: end a directory
    # prefix with "/" (``"build/torch-cpu/"``); ``""`` matches every file. If the resulting
    # tree equals the branch's current tree no commit is made and the current id is returned.
    def publish(
        self,
        repo_id: str,
        branch: str,
        files: Mapping[str, Path],
        *,
        delete_prefixes: tuple[str, ...] = (),
        message: str = "Upload with kernelkit",
    ) -> str:
        """Atomically commit to ``branch`` (created if missing): remove every existing file under
        ``delete_prefixes``, then add ``files`` (repo path -> local file). Return the new commit
        id. Readers see the old commit or the new one, never a half upload."""
        ...

    def tag(self, repo_id: str, tag: str, commit: str) -> None:
        """Create tag ``tag`` at ``commit``; refuse to move an existing tag to another commit
        (``HubError``); tagging the commit the tag already names is a no-op."""
        ...

    # --- small additions for the loader (every backend implements them) -------------------

    def repo_exists(self, repo_id: str) -> bool:
        """Whether the repository exists (cheap; never raises for a missing repository)."""
        ...

    def read_file(self, repo_id: str, commit: str, path: str) -> bytes | None:
        """The bytes of one file at ``commit`` (e.g. ``build/<variant>/metadata.json``,
        ``kernel-status.toml``); ``None`` if the file does not exist at that commit."""
        ...

    def list_dirs(self, repo_id: str, commit: str, path: str = "build") -> list[str]:
        """Names (sorted) of the immediate sub-directories of ``path`` at ``commit``: the
        variant names for ``path="build"``. Empty if ``path`` does not exist."""
        ...
