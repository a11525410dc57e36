"""The grammars of repository ids and branch/tag names, shared by everyone who checks one: the
manifest (``[general.hub]``, ``kernel-depends``), the hub (before any git process runs) and the
loader (before any cache path is built). Full matches only (``\\Z``/``fullmatch``: ``$`` would
accept a trailing newline)."""

from __future__ import annotations

import re

#: The longest org or name (the Hugging Face Hub's limit): longer ones would also overflow a
#: file name in the cache.
MAX_REPO_PART = 96
_REPO_PART = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_REF_PART = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._+-]*")


def is_repo_id(repo_id: object) -> bool:
    """``org/name`` with safe parts: letters, digits, ``.``, ``_``, ``-``; no ``.git`` suffix."""
    parts = repo_id.split("/") if isinstance(repo_id, str) else []
    return len(parts) == 2 and all(
        _REPO_PART.fullmatch(p) is not None and not p.endswith(".git")
        and len(p) <= MAX_REPO_PART for p in parts)


def is_ref_name(name: object) -> bool:
    """A safe branch or tag name: ``/``-separated parts, no ``..``, no ``.lock`` suffix."""
    if not isinstance(name, str) or not name or len(name) > 200 or ".." in name:
        return False
    return all(_REF_PART.fullmatch(p) is not None and not p.endswith((".lock", "."))
               for p in name.split("/"))
