"""Identifiers of a build: the unique id / op namespace (spec §3.1) and kernel provenance."""

from __future__ import annotations

import base64
import secrets
from dataclasses import dataclass
from pathlib import Path

from kernelkit.artifact.metadata import Commit
from kernelkit.errors import CommandError
from kernelkit.util.run import run


@dataclass(frozen=True)
class GitState:
    """What git says about the repository holding a kernel project."""

    commit: str  # HEAD commit id
    tree: str  # HEAD tree id
    dirty: bool  # a tracked file differs from HEAD (untracked files and submodules ignored)


def git_state(kernel_dir: Path) -> GitState | None:
    """The git state of the repository containing ``kernel_dir`` (possibly a parent monorepo);
    ``None`` when it is not in a git work tree or has no commit yet."""
    try:
        out = run(["git", "rev-parse", "HEAD", "HEAD^{tree}"], cwd=kernel_dir,
                  what="git rev-parse").stdout.split()
        status = run(["git", "status", "--porcelain", "--untracked-files=no",
                      "--ignore-submodules=all"], cwd=kernel_dir, what="git status").stdout
    except (CommandError, FileNotFoundError, NotADirectoryError):
        return None
    if len(out) != 2:
        return None
    return GitState(commit=out[0], tree=out[1], dirty=bool(status.strip()))


def random_id() -> str:
    """64 random bits, little-endian, RFC 4648 base32 lowercase without padding (13 chars)."""
    raw = secrets.randbits(64).to_bytes(8, "little")
    return base64.b32encode(raw).decode("ascii").rstrip("=").lower()


def unique_id(kernel_dir: Path, state: GitState | None = None) -> str:
    """First 7 hex of the HEAD *tree* id (+ ``_dirty``), else a random 13-char id."""
    state = state if state is not None else git_state(kernel_dir)
    if state is None:
        return random_id()
    return state.tree[:7] + ("_dirty" if state.dirty else "")


def kernel_commit(state: GitState | None) -> Commit | None:
    """Provenance of the kernel sources: HEAD commit + dirty flag, if known."""
    return Commit(state.commit, state.dirty) if state is not None else None


def ops_name(python_name: str, backend: str, uid: str) -> str:
    """The op namespace and extension module name: ``_<python_name>_<backend>_<uid>``."""
    return f"_{python_name}_{backend}_{uid}"
