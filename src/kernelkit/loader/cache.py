"""The loader's content-addressed cache: where things live, refs, variant lists.

Layout (one directory per repository; everything under a commit is immutable)::

    <cache>/<org>--<name>--<hash>/     (``identity.cache_folder_name``: the hash of the hub's
                                        identity and the exact repository id keeps ``a/b--c``
                                        and ``a--b/c`` apart, and the same id on two hubs)
        refs/listing.json               the hub's last listing of branches and tags (``{"format",
                                        "stamp", "branches", "tags"}``), replaced whole by
                                        ``kernelkit.loader.offline.record_refs`` after every
                                        ``list_refs``: one write however many refs (100k tags
                                        take one file, not 100k). ``stamp`` is the hub's cheap
                                        fingerprint of its refs when it has one (a directory
                                        hub, ``kernelkit.hub.refstamp``): while it still
                                        matches, a version lookup answers from this file
        refs/resolved/<ref>             a branch-or-tag name the hub resolved by name (the hub
                                        does not say which): ``<commit>\\n<ref>\\n``, file name
                                        ``identity.ref_file_name`` (bounded); newer than any
                                        listing (a listing removes the names it holds)
        <commit>/variants.json          the variant names under ``build/`` at that commit
        <commit>/status.json            the commit's ``kernel-status.toml`` redirect, if any
        <commit>/build/<variant>/       one verified variant, exactly as published
        <commit>/build/.<variant>.receipt   the verification receipt (see ``receipt.py``)
        <commit>/sources.json           the digest of the sources published for that commit
                                        (``sources.py``; a build-from-source fallback reads it
                                        offline)
        <commit>/local/<variant>/       a variant built here from those sources (no published
                                        variant fitted: ``kernelkit.source_build``), sealed
                                        with its own digest and marked in its provenance
        <commit>/local/.<variant>.receipt   its receipt, as for a download
        sources/<hex>.tar.gz            a verified sources archive (content-addressed)
        .locks/<commit>.<variant>.lock  per-variant download lock
        .locks/<commit>.<variant>.build.lock  per-variant local build lock
        .locks/repo.lock                held shared by every download into the folder, taken
                                        exclusively by ``kernelkit cache rm/prune``
                                        (``cache_admin.py``): nothing is deleted while another
                                        process installs
        repo.json                       ``{"repo_id", "hub"}``: whose folder this is (the name
                                        only hashes them), for ``kernelkit cache ls``

Offline mode resolves versions, branches and tags through ``refs/`` and never needs the hub
(``kernelkit.loader.offline.select_offline``). Ref files of older layouts (``refs/<name>``,
``refs/heads/<name>``, ``refs/tags/<name>``) are never read: an old cache is a miss, never a
wrong answer.

Every entry is read through ``kernelkit.loader.owned`` (the user's own, not writable by others)
and written with modes that keep it so.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from kernelkit.loader.identity import (
    cache_folder_name,
    check_repo_id,
    is_revision,
    ref_file_name,
    ref_from_file_name,
)
from kernelkit.loader.owned import check_entry, read_owned, write_owned
from kernelkit.util.fs import remove_stale_temp_files

if TYPE_CHECKING:
    from kernelkit.hub.port import Refs

STALE_TEMP_S = 60.0  # a temp file of a tiny write this old belongs to a killed writer
FULL_COMMIT_RE = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})\Z")
LISTING_FORMAT = 1
REF_KINDS = ("heads", "tags", "resolved")  # heads/tags: the listing; resolved: one file each
RECORD = "repo.json"  # whose folder this is (module docstring)
REPO_LOCK = "repo.lock"  # under .locks/: shared by downloads, exclusive for removals


def is_full_commit(revision: str) -> bool:
    return FULL_COMMIT_RE.match(revision) is not None


class Listing(NamedTuple):
    """A recorded ``list_refs`` answer: branches and tags (name -> commit), and the hub's refs
    stamp when it was taken (``None``: the hub has none, or it was not trustworthy then)."""

    branches: dict[str, str]
    tags: dict[str, str]
    stamp: str | None


class RepoCache:
    """The cache directory of one repository (a plain class: it is built on every load, and
    a dataclass costs a code generation at import time on the warm path)."""

    __slots__ = ("hub", "repo_id", "root")

    def __init__(self, root: Path, repo_id: str, hub: str) -> None:
        self.root = root  # <cache>/<org>--<name>--<hash>
        self.repo_id = repo_id
        self.hub = hub  # the hub's identity (kernelkit.hub.hubid)

    def __repr__(self) -> str:
        return f"RepoCache({str(self.root)!r}, {self.repo_id!r}, {self.hub!r})"

    @classmethod
    def of(cls, cache_dir: Path, repo_id: str, hub: str) -> RepoCache:
        """The folder of ``repo_id`` as served by the hub whose identity is ``hub``
        (``Hub.hub_identity``, or ``Settings.hub_identity()`` without a hub object).
        ``HubError`` for an invalid repository id: no path is built from one."""
        return cls(cache_dir / cache_folder_name(check_repo_id(repo_id), hub), repo_id, hub)

    def check(self) -> None:
        """Refuse the repository folder if someone else could have written it
        (``UnsafeCacheError``); a folder that does not exist yet is fine."""
        check_entry(self.root)

    # --- paths ----------------------------------------------------------------------------

    def commit_dir(self, commit: str) -> Path:
        return self.root / commit

    def variant_dir(self, commit: str, variant: str) -> Path:
        return self.root / commit / "build" / variant

    def receipt_path(self, commit: str, variant: str) -> Path:
        return self.root / commit / "build" / f".{variant}.receipt"

    def lock_path(self, commit: str, variant: str) -> Path:
        return self.root / ".locks" / f"{commit}.{variant}.lock"

    def local_variant_dir(self, commit: str, variant: str) -> Path:
        """A variant built here from the commit's published sources (``kernelkit.source_build``)."""
        return self.root / commit / "local" / variant

    def local_receipt_path(self, commit: str, variant: str) -> Path:
        return self.root / commit / "local" / f".{variant}.receipt"

    def build_lock_path(self, commit: str, variant: str) -> Path:
        return self.root / ".locks" / f"{commit}.{variant}.build.lock"

    def sources_record_path(self, commit: str) -> Path:
        return self.root / commit / "sources.json"

    def sources_archive(self, name: str) -> Path:
        """``sources/<name>`` (``<hex>.tar.gz``, the hub's file name)."""
        return self.root / "sources" / name

    def listing_path(self) -> Path:
        return self.root / "refs" / "listing.json"

    def repo_lock_path(self) -> Path:
        return self.root / ".locks" / REPO_LOCK

    def _write(self, path: Path, data: bytes) -> None:
        """Write the cache file ``path`` (``owned.write_owned``: atomic, modes that keep it
        the user's own), recording whose folder this is on the first write; one retry if
        ``kernelkit cache rm`` removed the folder between the two steps."""
        for attempt in (1, 2):
            try:
                record = self.root / RECORD
                # a label (install_from_folder's "(the cache folder X)") is not an identity
                if not record.is_file() and not self.hub.startswith("("):
                    write_owned(record, json.dumps({"repo_id": self.repo_id,
                                                    "hub": self.hub}).encode())
                write_owned(path, data)
                return
            except FileNotFoundError:
                if attempt == 2:
                    raise

    def ref_path(self, kind: str, ref: str) -> Path:
        """``refs/resolved/<bounded file name>`` (the only kind kept one file per ref)."""
        if kind != "resolved":
            raise ValueError(f"refs of kind {kind!r} live in refs/listing.json, not in files")
        return self.root / "refs" / "resolved" / ref_file_name(ref)

    def read_json(self, path: Path) -> object:
        """A JSON cache file (checked by ``owned``); ``None`` if missing or not JSON."""
        raw = read_owned(path)
        if raw is None:
            return None
        try:
            return json.loads(raw)
        except (ValueError, RecursionError):
            return None

    # --- the recorded listing -------------------------------------------------------------

    def read_listing(self) -> Listing | None:
        data = self.read_json(self.listing_path())
        if not isinstance(data, dict) or data.get("format") != LISTING_FORMAT:
            return None
        stamp = data.get("stamp")
        return Listing(_valid_refs(data.get("branches")), _valid_refs(data.get("tags")),
                       stamp if isinstance(stamp, str) else None)

    def write_listing(self, refs: Refs, stamp: str | None) -> None:
        """Replace the recorded listing with ``refs`` (one atomic write). A name or commit id
        a hostile hub made up (a newline, a 300-character name, ``..``) is not recorded: it
        could never be asked for anyway."""
        data = {"format": LISTING_FORMAT, "stamp": stamp,
                "branches": _valid_refs(refs.branches), "tags": _valid_refs(refs.tags)}
        path = self.listing_path()
        remove_stale_temp_files(path, STALE_TEMP_S)
        self._write(path, json.dumps(data, separators=(",", ":"), sort_keys=True).encode())

    # --- refs -----------------------------------------------------------------------------

    def read_ref(self, kind: str, ref: str) -> str | None:
        """The commit ``ref`` had in namespace ``kind`` (:data:`REF_KINDS`), if recorded."""
        if kind != "resolved":
            listing = self.read_listing()
            return None if listing is None else (
                listing.branches if kind == "heads" else listing.tags).get(ref)
        raw = read_owned(self.ref_path(kind, ref))
        parsed = _parse_ref_file(raw)
        if parsed is None or parsed[1] not in (None, ref):
            return None
        return parsed[0]

    def write_ref(self, kind: str, ref: str, commit: str) -> None:
        """Remember ``ref -> commit`` in ``refs/resolved`` (listings: :meth:`write_listing`);
        an invalid name or commit id is not recorded."""
        if not is_full_commit(commit) or not is_revision(ref):
            return
        if self.read_ref(kind, ref) != commit:
            path = self.ref_path(kind, ref)
            remove_stale_temp_files(path, STALE_TEMP_S)
            self._write(path, f"{commit}\n{ref}\n".encode())

    def forget_ref(self, kind: str, ref: str) -> None:
        self.ref_path(kind, ref).unlink(missing_ok=True)

    def refs(self, kind: str) -> dict[str, str]:
        """Every recorded ref of namespace ``kind`` -> commit."""
        if kind != "resolved":
            listing = self.read_listing()
            if listing is None:
                return {}
            return dict(listing.branches if kind == "heads" else listing.tags)
        folder = self.root / "refs" / "resolved"
        try:
            names = os.listdir(folder)
        except (FileNotFoundError, NotADirectoryError):
            return {}
        check_entry(folder)
        out = {}
        for name in names:
            if name.startswith("."):  # a temporary file of an interrupted write
                continue
            parsed = _parse_ref_file(read_owned(folder / name))
            if parsed is None:
                continue
            ref = parsed[1] if parsed[1] is not None else ref_from_file_name(name)
            if ref is not None and ref_file_name(ref) == name:
                out[ref] = parsed[0]
        return out

    def commits(self) -> list[str]:
        """Full commit ids that have something cached."""
        try:
            return sorted(n for n in os.listdir(self.root) if is_full_commit(n))
        except FileNotFoundError:
            return []

    # --- variant lists --------------------------------------------------------------------

    def read_variants(self, commit: str) -> list[str] | None:
        """The variant names recorded for ``commit``, or ``None`` if never listed."""
        data = self.read_json(self.commit_dir(commit) / "variants.json")
        names = data.get("variants") if isinstance(data, dict) else None
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            return None
        return names

    def write_variants(self, commit: str, names: list[str]) -> None:
        path = self.commit_dir(commit) / "variants.json"
        remove_stale_temp_files(path, STALE_TEMP_S)
        self._write(path, json.dumps({"variants": sorted(names)}).encode())


def _valid_refs(refs: object) -> dict[str, str]:
    if not isinstance(refs, dict):
        return {}
    return {r: c for r, c in refs.items()
            if isinstance(c, str) and is_full_commit(c) and is_revision(r)}


def _parse_ref_file(raw: bytes | None) -> tuple[str, str | None] | None:
    """``(commit, name)`` of a ``refs/resolved`` file (``name`` ``None`` in the older form
    that held the commit alone)."""
    if raw is None:
        return None
    try:
        lines = raw.decode("utf-8").split("\n")
    except UnicodeDecodeError:
        return None
    commit = lines[0].strip()
    if not is_full_commit(commit):
        return None
    name = lines[1] if len(lines) > 1 and lines[1] else None
    return commit, name
