"""What a build records about where its sources came from, and the id it is built under.

- :func:`build_id`: the op namespace id from the content of the sources and the build settings
  (``generate.ids.content_id``), never from git: unchanged sources, the same id and nothing to
  recompile; changed sources, a new id.
- :func:`git_state`: the provenance (``metadata.json`` ``kernel``: commit and dirty flag) of a
  project in a git work tree. Only a project whose files the repository tracks has one: a
  project inside another repository that does not track it (an untracked or ignored
  directory) records none, and a source file the commit does not hold makes it dirty.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from kernelkit.artifact.metadata import Commit
from kernelkit.artifact.sources import sources_digest
from kernelkit.builder.caches.build_cache import source_digest, source_files
from kernelkit.errors import CommandError
from kernelkit.generate.ids import content_id
from kernelkit.manifest.model import Manifest
from kernelkit.util.run import run


def build_id(manifest: Manifest, capabilities: Sequence[str] | None = None) -> str:
    """The id of a build of ``manifest``'s sources (every backend's: one id per build) with the
    CUDA ``capabilities`` asked for (``None``: the toolkit's)."""
    return content_id(source_digest(manifest), ["capabilities=" + ";".join(capabilities or ())])


@dataclass(frozen=True)
class GitState:
    """What git says about the repository holding a kernel project."""

    commit: str  # HEAD commit id
    tree: str  # HEAD tree id
    dirty: bool  # tracked files differ from HEAD, or a source file is not in HEAD


def _git(args: list[str], cwd: Path) -> str:
    return run(["git", *args], cwd=cwd, what=f"git {args[0]}").stdout


def git_state(kernel_dir: Path, sources: Sequence[Path] = ()) -> GitState | None:
    """The git state of the repository containing ``kernel_dir`` (possibly a parent monorepo);
    ``None`` when it is not in a git work tree, has no commit yet, or does not track the
    project's ``build.toml``. ``sources`` (absolute paths): files that must be in the commit
    for it to describe the build; one that is not (untracked, ignored) makes the state dirty.
    Dirty otherwise follows upstream: a tracked file differs (submodules ignored)."""
    try:
        out = _git(["rev-parse", "HEAD", "HEAD^{tree}"], kernel_dir).split()
        tracked = set(_git(["ls-files", "-z", "--", "."], kernel_dir).split("\0"))
        status = _git(["status", "--porcelain", "--untracked-files=no",
                       "--ignore-submodules=all"], kernel_dir)
    except (CommandError, FileNotFoundError, NotADirectoryError):
        return None
    if len(out) != 2 or "build.toml" not in tracked:
        return None
    root = kernel_dir.resolve()
    untracked = [p for p in sources if _relative(p, root) not in tracked]
    return GitState(commit=out[0], tree=out[1], dirty=bool(status.strip()) or bool(untracked))


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()  # outside the project: never in `git ls-files .`


def project_git_state(manifest: Manifest) -> GitState | None:
    """:func:`git_state` of a project, with its source files (``build_cache.source_files``)."""
    return git_state(manifest.root.resolve(), source_files(manifest))


def sources_record(manifest: Manifest, state: GitState | None) -> dict[str, object]:
    """``provenance.kernelkit.sources`` of every variant: the digest of what a build reads
    (``artifact.sources``; what ``kernelkit upload`` publishes as ``sources/<hex>.tar.gz``), how
    many files, and the project's git commit (``None`` outside git)."""
    files = source_files(manifest)
    return {"digest": sources_digest(manifest.root, files), "files": len(files),
            "commit": state.commit if state is not None else None}


def kernel_commit(state: GitState | None) -> Commit | None:
    """Provenance of the kernel sources: HEAD commit + dirty flag, if known."""
    return Commit(state.commit, state.dirty) if state is not None else None
