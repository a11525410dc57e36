"""The hub port: the one small interface every hub backend implements.

Backends: ``local.LocalGitHub`` (a directory of git repositories, the embedded default and the
test double), ``git`` remotes, and the Hugging Face Hub through ``huggingface_hub``.
Revisions are immutable commit ids once resolved; versions are branches (``v1``) and semver
tags (``v1.2.0``).
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
        """Create tag ``tag`` at ``commit``; refuse to move an existing tag to another commit."""
        ...
