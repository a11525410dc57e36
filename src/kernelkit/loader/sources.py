"""The published sources of a commit: which digest, and the verified archive.

``kernelkit upload`` publishes a kernel's sources as ``sources/<hex>.tar.gz`` on the branch
``kernelkit-sources``, and every variant built by kernelkit records their digest in its
``metadata.json``
(``provenance.kernelkit.sources``, ``kernelkit.artifact.sources``). This module is the download
side: :func:`published_sources` reads the digest a commit's variants record (one
``metadata.json``, remembered in ``<commit>/sources.json`` for offline use), and
:func:`unpack_sources` unpacks the archive of a digest into a directory, verified, from the
cache (``sources/<hex>.tar.gz``) or fetched once from the hub (the head of
``kernelkit-sources``: which archive is named by the version, so the branch moving changes
nothing). An archive enters the cache only
after it matched its digest, and every unpack checks it again. Nothing here builds: that is
``kernelkit.source_build`` (the loader never imports the builder).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from kernelkit.artifact.sources import (
    SOURCES_BRANCH,
    SourcesRecord,
    archive_repo_path,
    extract_archive,
    is_digest,
    record_of,
)
from kernelkit.errors import (
    IntegrityError,
    MetadataError,
    NotBuildableError,
    OfflineError,
    RevisionNotFoundError,
)
from kernelkit.loader.owned import check_entry, make_dirs, read_owned, write_owned
from kernelkit.util.fs import temp_sibling

if TYPE_CHECKING:
    from kernelkit.loader.cache import RepoCache
    from kernelkit.loader.install import LazyHub

log = logging.getLogger(__name__)

MAX_METADATA_READS = 3  # variants asked for their record before concluding there is none


def published_sources(hub: LazyHub, rc: RepoCache, commit: str, variants: list[str], *,
                      offline: bool) -> SourcesRecord | None:
    """The sources digest the commit's variants record (the first of ``variants``, in that
    order, that records one; at most :data:`MAX_METADATA_READS` are read), remembered in
    ``<commit>/sources.json``; ``None`` when none records one (built by an older kernelkit or
    by another builder) or, offline, when it was never read online."""
    cached = _read_record(rc, commit)
    if cached is not None or offline:
        return cached
    from kernelkit.artifact.metadata import Metadata

    for variant in variants[:MAX_METADATA_READS]:
        where = f"{rc.repo_id}@{commit[:12]}:build/{variant}/metadata.json"
        raw = hub.get().read_file(rc.repo_id, commit, f"build/{variant}/metadata.json")
        if raw is None:
            continue
        try:
            meta = Metadata.loads(raw, where)
        except MetadataError as exc:
            log.warning("%s", exc.message)
            continue
        record = record_of(meta.provenance.extra) if meta.provenance is not None else None
        if record is not None:
            write_owned(rc.sources_record_path(commit),
                        json.dumps({**record.to_json(), "from": variant}).encode())
            return record
    return None


def _read_record(rc: RepoCache, commit: str) -> SourcesRecord | None:
    raw = read_owned(rc.sources_record_path(commit))
    try:
        data = json.loads(raw) if raw is not None else None
    except ValueError:
        return None
    return record_of({"sources": data}) if isinstance(data, dict) else None


def unpack_sources(hub: LazyHub, rc: RepoCache, commit: str, digest: str, dest: Path, *,
                   offline: bool) -> int:
    """Unpack the sources of ``digest`` into the new directory ``dest``, verified against
    ``digest``; the number of files. The archive comes from the cache, else (online) from the
    commit on the hub, and is cached only once it verified. A corrupt cached archive is
    fetched again online; offline it is an ``IntegrityError``. ``dest`` is left absent on any
    error."""
    if not is_digest(digest):
        raise IntegrityError(f"{rc.repo_id}@{commit[:12]}", "a sources digest sha256:<hex>",
                             repr(digest)[:80])
    repo_path = archive_repo_path(digest)
    cached = rc.sources_archive(repo_path.rsplit("/", 1)[1])
    where = f"{rc.repo_id}@{commit[:12]}:{repo_path}"
    if check_entry(cached):
        try:
            return extract_archive(cached, dest, digest, f"{where} (cached: {cached})")
        except IntegrityError:
            if offline:
                raise
            log.warning("the cached %s is corrupt; fetching it again", cached)
            cached.unlink(missing_ok=True)
    if offline:
        raise OfflineError(
            f"the sources of {rc.repo_id}@{commit[:12]} ({digest}) are not in the cache "
            f"({rc.root}) and offline mode is on (KERNELKIT_OFFLINE/HF_HUB_OFFLINE)",
            hint="load it once online with build_missing=True (that caches its sources), or "
                 "turn offline mode off")
    return _fetch(hub, rc, commit, repo_path, cached, dest, digest, where)


def _fetch(hub: LazyHub, rc: RepoCache, commit: str, repo_path: str, cached: Path, dest: Path,
           digest: str, where: str) -> int:
    hint = ("ask the publisher to upload again with a current kernelkit (`kernelkit upload` "
            "publishes the sources the builds record)")
    try:
        head = hub.get().resolve(rc.repo_id, SOURCES_BRANCH)
    except RevisionNotFoundError:
        raise NotBuildableError(f"{rc.repo_id}@{commit[:12]}", "the repository publishes no "
                                f"sources (no branch {SOURCES_BRANCH})", who="project",
                                hint=hint) from None
    entries = [e for e in hub.get().list_files(rc.repo_id, head, "sources")
               if e.path == repo_path]
    if not entries:
        raise NotBuildableError(
            f"{rc.repo_id}@{commit[:12]}", f"it was built from sources {digest}, but the "
            f"repository's {SOURCES_BRANCH} branch has no {repo_path}", who="project",
            hint=hint)
    where = f"{rc.repo_id}@{SOURCES_BRANCH}:{repo_path}"
    make_dirs(cached.parent)
    stage = temp_sibling(cached, "fetch")
    stage.mkdir(mode=0o700)
    try:
        log.info("downloading the sources of %s@%s (%s, %d bytes)", rc.repo_id, commit[:7],
                 digest[:19], entries[0].size)
        hub.get().fetch(rc.repo_id, head, [repo_path], stage)
        fetched = stage / repo_path
        count = extract_archive(fetched, dest, digest, where)  # before it is ever cached
        os.chmod(fetched, 0o644)
        os.replace(fetched, cached)
        return count
    finally:
        shutil.rmtree(stage, ignore_errors=True)
