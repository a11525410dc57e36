"""The loader's content-addressed cache: where things live, refs, variant lists.

Layout (one directory per repository; everything under a commit is immutable)::

    <cache>/<org>--<name>--<hash>/     (``identity.cache_folder_name``: the hash of the hub's
                                        identity and the exact repository id keeps ``a/b--c``
                                        and ``a--b/c`` apart, and the same id on two hubs)
        refs/heads/<ref>                the commit a branch (``v1``, ``main``) pointed to when
                                        last seen online (percent-quoted,
                                        ``identity.ref_file_name``); written by
                                        ``kernelkit.loader.offline.record_refs`` after every
                                        ``list_refs``
        refs/tags/<ref>                 the same for tags (``v1.2.0``): a branch and a tag of one
                                        name never share a file
        refs/resolved/<ref>             a branch-or-tag name the hub resolved by name (the hub
                                        does not say which); newer than any listing (a listing
                                        removes the names it holds)
        <commit>/variants.json          the variant names under ``build/`` at that commit
        <commit>/build/<variant>/       one verified variant, exactly as published
        <commit>/build/.<variant>.receipt   the verification receipt (see ``receipt.py``)
        .locks/<commit>.<variant>.lock  per-variant download lock
        .locks/repo.lock                held shared by every download into the folder, taken
                                        exclusively by ``kernelkit cache rm/prune``
                                        (``cache_admin.py``): nothing is deleted while another
                                        process installs
        repo.json                       ``{"repo_id", "hub"}``: whose folder this is (the name
                                        only hashes them), for ``kernelkit cache ls``

Offline mode resolves versions, branches and tags through ``refs/`` and never needs the hub
(``kernelkit.loader.offline.select_offline``). A ref file directly under ``refs/`` (the layout
before the namespaces) is never read: an old cache is a miss, never a wrong answer (its folder
name, without the hub in its hash, is not looked up anyway).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from kernelkit.loader.identity import (
    cache_folder_name,
    check_repo_id,
    is_revision,
    ref_file_name,
    ref_from_file_name,
)
from kernelkit.util.fs import atomic_write_text, remove_stale_temp_files

STALE_TEMP_S = 60.0  # a temp file of a tiny write this old belongs to a killed writer
FULL_COMMIT_RE = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})\Z")
REF_KINDS = ("heads", "tags", "resolved")  # the namespaces under refs/ (module docstring)
RECORD = "repo.json"  # whose folder this is (module docstring)
REPO_LOCK = "repo.lock"  # under .locks/: shared by downloads, exclusive for removals


def is_full_commit(revision: str) -> bool:
    return FULL_COMMIT_RE.match(revision) is not None


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

    # --- paths ----------------------------------------------------------------------------

    def commit_dir(self, commit: str) -> Path:
        return self.root / commit

    def variant_dir(self, commit: str, variant: str) -> Path:
        return self.root / commit / "build" / variant

    def receipt_path(self, commit: str, variant: str) -> Path:
        return self.root / commit / "build" / f".{variant}.receipt"

    def lock_path(self, commit: str, variant: str) -> Path:
        return self.root / ".locks" / f"{commit}.{variant}.lock"

    def repo_lock_path(self) -> Path:
        return self.root / ".locks" / REPO_LOCK

    def _write(self, path: Path, text: str) -> None:
        """Write ``path`` atomically, recording whose folder this is on the first write; one
        retry if ``kernelkit cache rm`` removed the folder between the two steps."""
        for attempt in (1, 2):
            try:
                record = self.root / RECORD
                # a label (install_from_folder's "(the cache folder X)") is not an identity
                if not record.is_file() and not self.hub.startswith("("):
                    atomic_write_text(record, json.dumps({"repo_id": self.repo_id,
                                                          "hub": self.hub}))
                atomic_write_text(path, text)
                return
            except FileNotFoundError:
                if attempt == 2:
                    raise

    # --- refs -----------------------------------------------------------------------------

    def ref_path(self, kind: str, ref: str) -> Path:
        """``refs/<kind>/<quoted ref>``; ``kind`` is one of :data:`REF_KINDS`."""
        if kind not in REF_KINDS:
            raise ValueError(f"unknown ref kind {kind!r}")
        return self.root / "refs" / kind / ref_file_name(ref)

    def read_ref(self, kind: str, ref: str) -> str | None:
        try:
            commit = self.ref_path(kind, ref).read_text().strip()
        except (OSError, UnicodeDecodeError):
            return None
        return commit if is_full_commit(commit) else None

    def write_ref(self, kind: str, ref: str, commit: str) -> None:
        """Remember ``ref -> commit`` in namespace ``kind``; a name or commit id a hostile hub
        made up (a newline, a 300-character name, ``..``) is not recorded: it could never be
        asked for anyway."""
        if not is_full_commit(commit) or not is_revision(ref):
            return
        if self.read_ref(kind, ref) != commit:
            remove_stale_temp_files(self.ref_path(kind, ref), STALE_TEMP_S)
            self._write(self.ref_path(kind, ref), commit)

    def forget_ref(self, kind: str, ref: str) -> None:
        self.ref_path(kind, ref).unlink(missing_ok=True)

    def refs(self, kind: str) -> dict[str, str]:
        """Every cached ref of namespace ``kind`` -> commit."""
        try:
            names = os.listdir(self.root / "refs" / kind)
        except (FileNotFoundError, NotADirectoryError):
            return {}
        out = {}
        for name in names:
            if name.startswith("."):  # a temporary file of an interrupted write
                continue
            commit = self.read_ref(kind, ref_from_file_name(name))
            if commit is not None:
                out[ref_from_file_name(name)] = commit
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
        try:
            data = json.loads((self.commit_dir(commit) / "variants.json").read_bytes())
        except (FileNotFoundError, NotADirectoryError, ValueError):
            return None
        names = data.get("variants") if isinstance(data, dict) else None
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            return None
        return names

    def write_variants(self, commit: str, names: list[str]) -> None:
        remove_stale_temp_files(self.commit_dir(commit) / "variants.json", STALE_TEMP_S)
        self._write(self.commit_dir(commit) / "variants.json",
                    json.dumps({"variants": sorted(names)}))
