"""Validation of the names the hub accepts: repository ids, branch/tag names, repo paths.

Checked in Python before any git process runs, so a bad name is a clear ``HubError`` and never
reaches git as an option or a revision expression (``HEAD~1``, ``:path``, ``--upload-pack``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from kernelkit.errors import HubError, TreeClashError
from kernelkit.util.names import (
    MAX_REPO_PART as MAX_REPO_PART,  # re-exported
    is_ref_name as is_ref_name,
    is_repo_id as is_repo_id,
)

_HEX = re.compile(r"^[0-9a-f]{4,64}\Z")
_FULL_ID = re.compile(r"^([0-9a-f]{40}|[0-9a-f]{64})\Z")
SEMVER_TAG = re.compile(r"^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\Z")
VERSION_BRANCH = re.compile(r"^v(0|[1-9][0-9]*)\Z")


def check_repo_id(repo_id: str) -> tuple[str, str]:
    """``org/name`` -> ``(org, name)``; ``HubError`` for anything else."""
    if not is_repo_id(repo_id):
        raise HubError(
            f"invalid repository id {repo_id!r}",
            hint="use <org>/<name> with letters, digits, '.', '_' and '-', each part at most "
                 f"{MAX_REPO_PART} characters (e.g. my-org/relu)",
        )
    org, name = repo_id.split("/")
    return org, name


def check_ref_name(name: str, what: str = "branch") -> str:
    """A name for a *new* branch or tag: :func:`is_ref_name`, and not one that a revision
    could mean otherwise: ``HEAD`` (any case), a full ref (``refs/...``), or 4 to 64 hex
    digits (a branch ``deadbeef`` would shadow the commit id it spells)."""
    if not is_ref_name(name) or _reserved(name):
        raise HubError(
            f"invalid {what} name {name!r}",
            hint=f"a {what} name uses letters, digits, '.', '_', '+', '-' and '/' (e.g. v1); "
                 "not HEAD, not refs/..., not a hex string that reads as a commit id",
        )
    return name


def _reserved(name: str) -> bool:
    return (name.upper() == "HEAD" or name.startswith("refs/") or is_hex_prefix(name.lower()))


def is_hex_prefix(text: str) -> bool:
    """Could ``text`` be a (short) commit id: 4 to 64 lowercase hex digits."""
    return bool(_HEX.match(text))


def is_full_commit_id(text: str) -> bool:
    return bool(_FULL_ID.match(text))


def check_repo_path(path: str) -> str:
    """A file path inside a repository: relative POSIX, no empty/``.``/``..``/``.git`` parts."""
    parts = path.split("/")
    if (not path or "\n" in path or "\0" in path or "\\" in path
            or any(p in ("", ".", "..", ".git") for p in parts) or not _utf8(path)):
        raise HubError(f"invalid path in repository: {path!r}",
                       hint="repository paths are relative, '/'-separated, without '..'")
    return path


def _utf8(text: str) -> bool:
    """Whether ``text`` can be written as UTF-8 (a lone surrogate cannot: git gets bytes)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_tree_paths(paths: Iterable[str]) -> None:
    """The one tree rule of every hub: no path is both a file and a directory. ``paths`` are
    the files of a whole new tree; ``TreeClashError`` names the first clash (``build`` with
    ``build/x.py``), so nothing is dropped silently."""
    files = set(paths)
    for path in sorted(files):
        for i in range(1, path.count("/") + 1):
            parent = path.rsplit("/", i)[0]
            if parent in files:
                raise TreeClashError(parent, path)


def check_publish(branch: str, files: Iterable[str]) -> None:
    """The arguments every backend's ``publish`` validates before touching anything."""
    check_ref_name(branch, "branch")
    for p in files:
        check_repo_path(p)


def under_prefixes(path: str, prefixes: tuple[str, ...]) -> bool:
    """Whether ``path`` starts with one of ``prefixes`` (plain string prefixes; "" = all)."""
    return any(path.startswith(p) for p in prefixes)


def normalize_dir(path: str) -> str:
    """``"build/"`` / ``"/build"`` / ``"build"`` -> ``"build"``; ``""`` stays ``""``."""
    return path.strip("/")
