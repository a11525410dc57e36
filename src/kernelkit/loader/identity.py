"""Identities the loader derives from what it controls, never from text a hub provides.

* the cache folder of a repository on a hub: a readable prefix plus a hash of the hub's identity
  (``kernelkit.hub.hubid``) and the *exact* repository id, so no two ids share a folder
  (``acme/fast--gelu`` and ``acme--fast/gelu`` used to) and neither do two hubs serving the same
  id (which commit ``v1`` means, and trust, are per hub);
* the file name of a cached ref: percent-quoted, with a leading ``.`` quoted too, so it can
  never be ``.``/``..``, and bounded: a long name keeps a readable head and ends with a hash
  (:func:`ref_file_name`; a valid 200-character tag quotes to far more than 255 bytes);
* the module name a variant is imported under: from the variant's cache path, not from
  ``metadata.id`` (a kernel whose id is ``json`` must not replace ``sys.modules['json']``).

Also the checks of caller-given repository ids and revisions, done before any hub call or path
is built (``\\Z`` anchors: ``$`` would accept a trailing newline). Light imports: warm path.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from urllib.parse import quote, unquote

from kernelkit.errors import HubError, VersionRequestError
from kernelkit.util.names import (
    MAX_REPO_PART,
    is_repo_id as is_repo_id,  # re-exported
)

_REF_PART = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._+-]*")
_HEX = re.compile(r"[0-9a-f]{4,64}")
_VARIANT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,127}")
_PY_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PREFIX_CHARS = 60  # readable part of a cache folder name (the hash makes it unique)
MAX_REF_FILE = 160  # bytes of a ref file name (most file systems allow 255)
_REF_FILE_HEAD = 80  # readable head of a long ref file name (+ "%%" + 64 hex = 146)


def check_repo_id(repo_id: object) -> str:
    """:func:`is_repo_id`, else ``HubError`` naming the id."""
    if not is_repo_id(repo_id):
        raise HubError(
            f"invalid repository id {repo_id!r}",
            hint="use <org>/<name> with letters, digits, '.', '_' and '-', each part at most "
                 f"{MAX_REPO_PART} characters (e.g. my-org/relu)",
        )
    return str(repo_id)


def is_revision(revision: object) -> bool:
    """A branch, tag or (short) commit id that is safe to hand to a hub or name a file after."""
    return isinstance(revision, str) and 0 < len(revision) <= 200 and (
        _HEX.fullmatch(revision) is not None
        or (".." not in revision and all(
            _REF_PART.fullmatch(p) is not None and not p.endswith((".lock", "."))
            for p in revision.split("/"))))


def check_revision(revision: object) -> str:
    """:func:`is_revision`, else ``VersionRequestError`` (a ``ValueError``, as upstream raises
    for bad arguments)."""
    if not is_revision(revision):
        raise VersionRequestError(
            f"invalid revision {revision!r}",
            hint="a revision is a branch or tag name (letters, digits, '.', '_', '+', '-', '/') "
                 "or a commit id",
        )
    return str(revision)


def cache_folder_name(repo_id: str, hub: str) -> str:
    """``<org>--<name>--<16 hex of sha256(hub + "\\0" + repo_id)>``: readable, and injective in
    practice over (hub identity, repository id); neither part can hold a NUL."""
    readable = repo_id.replace("/", "--")[:_PREFIX_CHARS]
    key = f"{hub}\0{repo_id}".encode("utf-8", "surrogateescape")
    return f"{readable}--{hashlib.sha256(key).hexdigest()[:16]}"


def cache_folder_prefix(repo_id: str) -> str:
    """The readable part of :func:`cache_folder_name` plus its separator (shared by every hub's
    folder of ``repo_id``, and possibly by other ids: never trust a match on it alone)."""
    return repo_id.replace("/", "--")[:_PREFIX_CHARS] + "--"


def ref_file_name(ref: str) -> str:
    """The file name of a cached ref: percent-quoted (a leading ``.`` quoted too, so never
    ``.``/``..`` or hidden) and at most :data:`MAX_REF_FILE` bytes, whatever the ref's length.

    A quoted name longer than that (or empty, or a ref that is not UTF-8) becomes a readable
    head plus ``%%`` plus the SHA-256 of the ref: quoting escapes every ``%`` (``%25``), so
    ``%%`` marks the long form and no short name can equal a long one; two long names are
    equal only if their SHA-256 are (injective in practice). Short names are reversible
    (:func:`ref_from_file_name`); the long form is not, so the ref file itself also records
    its name (``kernelkit.loader.cache``)."""
    try:
        quoted = quote(ref, safe="")
    except UnicodeEncodeError:  # a lone surrogate: no UTF-8 name, only the hashed form
        quoted = ""
    if quoted.startswith("."):
        quoted = "%2E" + quoted[1:]
    if 0 < len(quoted) <= MAX_REF_FILE:  # quote() returns ASCII: characters are bytes
        return quoted
    head = quoted[:_REF_FILE_HEAD]
    cut = head.rfind("%", len(head) - 2)  # never end the head inside a %XX escape
    head = head[:cut] if cut >= 0 else head
    digest = hashlib.sha256(ref.encode("utf-8", "surrogatepass")).hexdigest()  # injective
    return f"{head}%%{digest}"


def ref_from_file_name(name: str) -> str | None:
    """The ref a short :func:`ref_file_name` stands for; ``None`` for the hashed long form."""
    return None if "%%" in name else unquote(name)


def is_variant_name(name: object) -> bool:
    """A variant directory name a hub listed that may name a cache directory (no ``..``,
    no leading ``.``, no separators); the ranking rejects unknown forms later."""
    return isinstance(name, str) and _VARIANT.fullmatch(name) is not None


def module_name(variant_dir: Path, python_name: str) -> str:
    """The ``sys.modules`` key of a variant: a fixed prefix, the (validated) python name and a
    hash of the variant's absolute path; never text taken from the hub as is."""
    safe = python_name if _PY_NAME.fullmatch(python_name) else "kernel"
    digest = hashlib.sha256(str(variant_dir).encode("utf-8", "surrogateescape")).hexdigest()
    return f"_kernelkit_{safe[:40]}_{digest[:16]}"
