"""What the web pages show, read from the hub through :class:`~kernelkit.serve.store.Store`.

Synchronous (git runs here); the pages call it in a worker thread. Every string taken from a
repository (card, commit titles, file and variant names, benchmark JSON) is data that
``serve/render.py`` escapes, never markup. Reads are bounded: a card over
:data:`MAX_CARD_BYTES` or a results file over :data:`MAX_RESULTS_BYTES` is reported, not read.

Caches hold values keyed by what cannot change under them: a commit id (its tree, date,
title), a blob id (a rendered card), or a repository's refs stamp (its index summary; no
stamp, no caching).
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from kernelkit.hub.names import SEMVER_TAG, VERSION_BRANCH, is_repo_id
from kernelkit.hub.refstamp import local_refs_stamp
from kernelkit.serve import card
from kernelkit.serve.fields import MAX_JSON_DEPTH, json_depth
from kernelkit.serve.store import CommitInfo, Entry, Store
from kernelkit.variants.name import parse_variant

MAX_CARD_BYTES = 1 << 20
MAX_RESULTS_BYTES = 16 << 20
RESULTS_DIR = "benchmarks/results"  # `kernelkit benchmark --save`, carried by `upload`
RESULTS_FILE = "benchmark.json"
PLOT_KINDS = ("bars", "roofline")
_CACHE = 512


@dataclass(frozen=True)
class Summary:
    """One kernel on the index page."""

    repo_id: str
    latest: str | None  # the highest version branch (v<N>), else None
    commit: str | None
    date: str
    description: str
    variants: tuple[str, ...]
    tags: tuple[str, ...]

    @property
    def backends(self) -> tuple[str, ...]:
        """The backends of the variants (``cpu``, ``cuda``, ...; ``other``: not a variant)."""
        return tuple(sorted({_backend(v) for v in self.variants}))

    def matches(self, words: list[str]) -> bool:
        """Every word (case-insensitive) in the id, the description, a variant, a backend or a
        release tag."""
        text = " ".join([self.repo_id, self.description, *self.variants, *self.backends,
                         *self.tags]).casefold()
        return all(w.casefold() in text for w in words)


@dataclass(frozen=True)
class Version:
    branch: str
    number: int
    commit: str
    date: str
    title: str
    tags: tuple[str, ...]  # release tags of this major version, newest first
    head_tags: tuple[str, ...]  # those naming the branch's head


@dataclass(frozen=True)
class VariantInfo:
    name: str
    files: int
    size: int


@dataclass(frozen=True)
class Results:
    """One ``benchmarks/results/<variant>/benchmark.json`` and its charts."""

    variant: str
    path: str
    data: dict[str, Any] | None  # the parsed JSON object, or None with ``error``
    error: str | None
    plots: tuple[tuple[str, str, str | None], ...]  # (kind, light path, dark path or None)


@dataclass(frozen=True)
class KernelView:
    repo_id: str
    private: bool
    revision: str  # as asked (or the default: the highest version branch, else main)
    commit: str
    info: CommitInfo | None
    version: int | None  # N when ``revision`` is the branch v<N>
    versions: tuple[Version, ...]
    other_branches: tuple[tuple[str, str], ...]  # (name, commit) of branches not v<N>
    tags: tuple[tuple[str, str], ...]  # (tag, commit), every tag
    variants: tuple[VariantInfo, ...]
    card: str | None  # the card as safe HTML
    card_note: str | None  # why there is no card
    results: tuple[Results, ...]
    files: tuple[Entry, ...]


def _backend(variant: str) -> str:
    try:
        return parse_variant(variant).backend
    except ValueError:
        return "other"


def version_number(branch: str) -> int | None:
    m = VERSION_BRANCH.match(branch)
    return int(m.group(1)) if m else None


def latest_version(branches: dict[str, str]) -> str | None:
    numbered = [(n, b) for b in branches if (n := version_number(b)) is not None]
    return max(numbered)[1] if numbered else None


def _tag_key(tag: str) -> tuple[int, ...]:
    m = SEMVER_TAG.match(tag)
    return tuple(int(g) for g in m.groups()) if m else (-1,)


class Catalog:
    """The pages' view of one store, with its caches (thread-safe)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._lock = threading.Lock()
        self._summaries: dict[str, tuple[str, Summary]] = {}
        self._infos: OrderedDict[tuple[str, str], CommitInfo] = OrderedDict()
        self._cards: OrderedDict[tuple[str, str], str] = OrderedDict()

    # --- the index -------------------------------------------------------------------------

    def repo_ids(self) -> list[str]:
        """Every valid repository id of the hub (a directory whose name is not a valid id is
        not a repository the server can serve, and is not listed)."""
        return [r for r in self.store.hub.list_repos() if is_repo_id(r)]

    def summary(self, repo_id: str) -> Summary:
        stamp = local_refs_stamp(self.store.root, repo_id)
        with self._lock:
            hit = self._summaries.get(repo_id)
        if hit is not None and stamp is not None and hit[0] == stamp:
            return hit[1]
        summary = self._summarize(repo_id)
        if stamp is not None:
            with self._lock:
                if len(self._summaries) > 10_000:
                    self._summaries.clear()
                self._summaries[repo_id] = (stamp, summary)
        return summary

    def _summarize(self, repo_id: str) -> Summary:
        refs = self.store.refs(repo_id)
        latest = latest_version(refs.branches)
        commit = refs.branches.get(latest or "main")
        if commit is None:
            return Summary(repo_id, None, None, "", "", (), ())
        entries = self.store.tree(repo_id, commit)
        text = self._card_text(repo_id, commit, entries)
        info = self.commit_info(repo_id, commit)
        major = version_number(latest) if latest else None
        tags = tuple(sorted((t for t in refs.tags if (m := SEMVER_TAG.match(t))
                             and int(m.group(1)) == major), key=_tag_key, reverse=True))
        return Summary(repo_id, latest, commit, info.date if info else "",
                       card.summary(text) if text else "", _variant_names(entries), tags)

    # --- one kernel ------------------------------------------------------------------------

    def default_revision(self, repo_id: str) -> str:
        return latest_version(self.store.refs(repo_id).branches) or "main"

    def kernel(self, repo_id: str, revision: str, commit: str, raw_base: str) -> KernelView:
        """The page of ``repo_id`` at ``commit`` (``revision`` resolved by the caller)."""
        refs = self.store.refs(repo_id)
        entries = self.store.tree(repo_id, commit)
        versions = []
        for branch, head in refs.branches.items():
            number = version_number(branch)
            if number is None:
                continue
            info = self.commit_info(repo_id, head)
            mine = sorted((t for t in refs.tags if (m := SEMVER_TAG.match(t))
                           and int(m.group(1)) == number), key=_tag_key, reverse=True)
            versions.append(Version(branch, number, head, info.date if info else "",
                                    info.title if info else "", tuple(mine),
                                    tuple(t for t in mine if refs.tags[t] == head)))
        versions.sort(key=lambda v: v.number, reverse=True)
        others = tuple(sorted((b, c) for b, c in refs.branches.items()
                              if version_number(b) is None))
        card_html, note = self._card(repo_id, commit, entries, refs.branches.get("main"),
                                     raw_base)
        return KernelView(
            repo_id=repo_id, private=self.store.is_private(repo_id), revision=revision,
            commit=commit, info=self.commit_info(repo_id, commit),
            version=version_number(revision), versions=tuple(versions),
            other_branches=others,
            tags=tuple(sorted(refs.tags.items(), key=lambda t: _tag_key(t[0]), reverse=True)),
            variants=_variants(entries), card=card_html, card_note=note,
            results=tuple(self._results(repo_id, commit, entries)),
            files=tuple(e for e in entries if e.kind == "blob"))

    def commit_info(self, repo_id: str, commit: str) -> CommitInfo | None:
        key = (repo_id, commit)
        with self._lock:
            if key in self._infos:
                return self._infos[key]
        found = self.store.commits(repo_id, commit, 0, 1)
        info = found[0] if found else None
        if info is not None:
            with self._lock:
                self._infos[key] = info
                while len(self._infos) > _CACHE:
                    self._infos.popitem(last=False)
        return info

    # --- the card --------------------------------------------------------------------------

    def _card_entry(self, entries: list[Entry]) -> Entry | None:
        return next((e for e in entries if e.path == "README.md" and e.kind == "blob"), None)

    def _card_text(self, repo_id: str, commit: str, entries: list[Entry]) -> str | None:
        entry = self._card_entry(entries)
        if entry is None or entry.size > MAX_CARD_BYTES:
            return None
        return self.read(repo_id, commit, entry).decode("utf-8", "replace")

    def _card(self, repo_id: str, commit: str, entries: list[Entry], main: str | None,
              raw_base: str) -> tuple[str | None, str | None]:
        """The card at ``commit``, else ``main``'s (a version branch may have none)."""
        entry = self._card_entry(entries)
        if entry is None and main is not None and main != commit:
            commit, entries = main, self.store.tree(repo_id, main)
            entry = self._card_entry(entries)
        if entry is None:
            return None, "This kernel has no card (README.md, uploaded from CARD.md)."
        if entry.size > MAX_CARD_BYTES:
            return None, (f"The card is {entry.size} bytes, more than the "
                          f"{MAX_CARD_BYTES} this page shows.")
        key = (entry.oid, raw_base)
        with self._lock:
            if key in self._cards:
                return self._cards[key], None
        html = card.render_card(self.read(repo_id, commit, entry).decode("utf-8", "replace"),
                                raw_base)
        with self._lock:
            self._cards[key] = html
            while len(self._cards) > _CACHE:
                self._cards.popitem(last=False)
        return html, None

    def read(self, repo_id: str, commit: str, entry: Entry) -> bytes:
        """A blob's bytes (the caller bounded its size), through the store's blob files."""
        return self.store.blob_file(repo_id, commit, entry).read_bytes()

    # --- benchmark results -----------------------------------------------------------------

    def _results(self, repo_id: str, commit: str, entries: list[Entry]) -> list[Results]:
        by_path = {e.path: e for e in entries if e.kind == "blob"}
        out = []
        for variant in _subdirs(entries, RESULTS_DIR):
            folder = f"{RESULTS_DIR}/{variant}"
            path = f"{folder}/{RESULTS_FILE}"
            plots = tuple(p for kind in PLOT_KINDS if (p := _plot(by_path, folder, kind)))
            entry = by_path.get(path)
            if entry is None:
                if plots:
                    out.append(Results(variant, path, None, "no benchmark.json", plots))
                continue
            data, error = self._parse_results(repo_id, commit, entry)
            out.append(Results(variant, path, data, error, plots))
        return out

    def _parse_results(self, repo_id: str, commit: str,
                       entry: Entry) -> tuple[dict[str, Any] | None, str | None]:
        if entry.size > MAX_RESULTS_BYTES:
            return None, f"{entry.size} bytes: larger than the {MAX_RESULTS_BYTES} shown here"
        raw = self.read(repo_id, commit, entry)
        if json_depth(raw) > MAX_JSON_DEPTH:
            return None, f"nests JSON deeper than {MAX_JSON_DEPTH} levels"
        try:
            data = json.loads(raw)
        except ValueError:
            return None, "not JSON"
        if not isinstance(data, dict):
            return None, "not a JSON object"
        schema = data.get("schema")
        if not (isinstance(schema, str) and schema.startswith("kernelkit.benchmark/")):
            return None, "not a kernelkit benchmark result (no schema kernelkit.benchmark/N)"
        return data, None


def _plot(by_path: dict[str, Entry], folder: str,
          kind: str) -> tuple[str, str, str | None] | None:
    """The chart ``kind`` of a results folder: SVG preferred, PNG else; light and dark."""
    for ext in ("svg", "png"):
        light = f"{folder}/benchmark-{kind}-light.{ext}"
        dark = f"{folder}/benchmark-{kind}-dark.{ext}"
        if light in by_path:
            return kind, light, dark if dark in by_path else None
        if dark in by_path:
            return kind, dark, None
    return None


def _subdirs(entries: list[Entry], folder: str) -> list[str]:
    prefix = folder + "/"
    return sorted(e.path[len(prefix):] for e in entries
                  if e.kind == "tree" and e.path.startswith(prefix)
                  and "/" not in e.path[len(prefix):])


def _variant_names(entries: list[Entry]) -> tuple[str, ...]:
    return tuple(_subdirs(entries, "build"))


def _variants(entries: list[Entry]) -> tuple[VariantInfo, ...]:
    out = []
    for name in _subdirs(entries, "build"):
        prefix = f"build/{name}/"
        blobs = [e for e in entries if e.kind == "blob" and e.path.startswith(prefix)]
        out.append(VariantInfo(name, len(blobs), sum(e.size for e in blobs)))
    return tuple(out)

