"""A kernel project's sources as a value: their digest, a deterministic archive, a safe unpack.

What a build reads (``build.toml``, the kernels' sources and includes, the ``torch-ext``
package: ``kernelkit.builder.caches.build_cache.source_files``) is recorded in each variant's
``metadata.json`` (``provenance.kernelkit.sources``: ``{"digest", "files", "commit"}``) and
published as ``sources/<hex>.tar.gz`` on the repository's branch ``kernelkit-sources``
(:data:`SOURCES_BRANCH`), where upstream's loaders never look. Not on the version branch:
upstream 0.17.2's offline ``load_kernel`` wants every file of the locked commit in its cache,
while its ``kernels download`` fetches ``build/`` only, so a file beside ``build/`` breaks it
(``tests/conformance``). A machine that no published variant fits can then build one from
exactly those bytes (``kernelkit.source_build``): the version's ``metadata.json`` pins the
digest, so the branch moving (archives are only ever added) changes nothing.

* The **digest** (``sha256:<hex>``) is over the files' content, not the archive's bytes: the
  SHA-256 of, for every file in byte order of its POSIX path, ``path + "\\0"`` and the raw
  SHA-256 of its content (the scheme of the builder's ``build_cache.source_digest``). Two
  archives of the same files (another zlib, another machine) have the same digest.
* The **archive** is deterministic all the same: a gzip'd POSIX tar of regular files only, sorted,
  mtime 0, uid/gid 0, no user names, mode 0644 or 0755, and no gzip name or time stamp.
* **Unpacking** trusts nothing before the digest matched: regular files only, relative paths
  without ``..``, no duplicates, bounded count and sizes; every file is written anew (``O_EXCL``)
  into an empty directory and hashed as it is written. The digest of what was written must
  be the expected one, else ``IntegrityError`` and the directory is removed.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import shutil
import tarfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kernelkit.errors import IntegrityError

SOURCES_DIR = "sources"  # in a hub repository, on SOURCES_BRANCH
SOURCES_BRANCH = "kernelkit-sources"  # archives named by digest, only ever added
DIGEST_PREFIX = "sha256:"
MAX_FILES = 20_000
MAX_FILE_BYTES = 256 << 20
MAX_TOTAL_BYTES = 1 << 30
_CHUNK = 1 << 20


@dataclass(frozen=True)
class SourceArchive:
    """An archive written by :func:`write_archive`: where, its digest and how many files."""

    path: Path
    digest: str
    files: int

    @property
    def repo_path(self) -> str:
        return archive_repo_path(self.digest)


@dataclass(frozen=True)
class SourcesRecord:
    """``provenance.kernelkit.sources`` of a variant: the digest of the sources it was built
    from, how many files, and the git commit of the project (``None`` outside git)."""

    digest: str
    files: int
    commit: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"digest": self.digest, "files": self.files, "commit": self.commit}


def is_digest(value: object) -> bool:
    """``sha256:`` + 64 lowercase hex."""
    if not isinstance(value, str) or not value.startswith(DIGEST_PREFIX):
        return False
    hexpart = value[len(DIGEST_PREFIX):]
    return len(hexpart) == 64 and all(c in "0123456789abcdef" for c in hexpart)


def archive_repo_path(digest: str) -> str:
    """``sources/<hex>.tar.gz``: the name follows from the digest alone (a metadata.json never
    names a path to fetch)."""
    if not is_digest(digest):
        raise ValueError(f"not a sources digest: {digest[:80]!r}")
    return f"{SOURCES_DIR}/{digest[len(DIGEST_PREFIX):]}.tar.gz"


def record_of(extra: Mapping[str, Any]) -> SourcesRecord | None:
    """The sources record in a variant's ``provenance.kernelkit`` (``None``: none, or malformed:
    a variant built before kernelkit recorded its sources)."""
    raw = extra.get("sources")
    if not isinstance(raw, dict) or not is_digest(raw.get("digest")):
        return None
    files = raw.get("files")
    commit = raw.get("commit")
    return SourcesRecord(raw["digest"], files if isinstance(files, int) else 0,
                         commit if isinstance(commit, str) else None)


def _ordered(root: Path, files: Iterable[Path]) -> list[tuple[str, Path]]:
    rels = {p.resolve().relative_to(root).as_posix(): p for p in files}
    return sorted(rels.items(), key=lambda t: t[0].encode("utf-8"))


def _sha256(path: Path) -> bytes:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
    return h.digest()


def _combine(entries: Iterable[tuple[str, bytes]]) -> str:
    h = hashlib.sha256()
    for rel, file_hash in sorted(entries, key=lambda t: t[0].encode("utf-8")):
        h.update(f"{rel}\0".encode())
        h.update(file_hash)
    return DIGEST_PREFIX + h.hexdigest()


def sources_digest(root: Path, files: Iterable[Path]) -> str:
    """The digest of ``files`` (paths under ``root``), see the module docstring."""
    root = root.resolve()
    return _combine((rel, _sha256(p)) for rel, p in _ordered(root, files))


def write_archive(root: Path, files: Iterable[Path], dest_dir: Path) -> SourceArchive:
    """Write ``dest_dir/<hex>.tar.gz`` holding ``files`` (paths under ``root``)."""
    root = root.resolve()
    ordered = _ordered(root, files)
    raw = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=9, mtime=0) as gz, \
            tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for rel, path in ordered:
            info = tarfile.TarInfo(rel)
            st = path.stat()
            info.size = st.st_size
            info.mode = 0o755 if st.st_mode & 0o111 else 0o644
            info.mtime = 0
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            with path.open("rb") as fh:
                tar.addfile(info, fh)
    digest = sources_digest(root, (p for _, p in ordered))
    dest_dir.mkdir(parents=True, exist_ok=True)
    out = dest_dir / archive_repo_path(digest).rsplit("/", 1)[1]
    out.write_bytes(raw.getvalue())
    return SourceArchive(out, digest, len(ordered))


def _member_path(member: tarfile.TarInfo, where: str) -> str:
    name = member.name
    parts = name.split("/")
    if (not member.isfile() or not name or name.startswith("/") or "\\" in name
            or "\0" in name or any(p in ("", ".", "..") for p in parts)):
        kind = "a regular file" if member.isfile() else f"type {member.type!r}"
        raise IntegrityError(f"{where}: {name[:200]!r}", "regular files at relative paths",
                             kind, hint="the sources archive is malformed or hostile; nothing "
                                        "of it was used")
    return name


def _copy_member(src: io.BufferedReader | Any, dest: Path, size: int, executable: bool) -> bytes:
    """Write ``size`` bytes of ``src`` to the new file ``dest``; their SHA-256."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0),
                 0o755 if executable else 0o644)
    h = hashlib.sha256()
    written = 0
    with os.fdopen(fd, "wb") as out:
        while chunk := src.read(min(_CHUNK, size - written) or 1):
            written += len(chunk)
            if written > size:
                break
            h.update(chunk)
            out.write(chunk)
    if written != size:
        raise OSError(f"{dest}: archive member is {written} bytes, its header says {size}")
    return h.digest()


def extract_archive(archive: Path, dest: Path, expected: str, where: str) -> int:
    """Unpack ``archive`` into the new directory ``dest`` and check it against ``expected``
    (``IntegrityError`` otherwise, ``dest`` removed); the number of files. ``where`` names the
    archive in messages (``org/name@abc1234:sources/<hex>.tar.gz``)."""
    dest.mkdir(mode=0o700)
    try:
        entries = _extract(archive, dest, where)
    except (tarfile.TarError, OSError, EOFError, gzip.BadGzipFile) as exc:
        shutil.rmtree(dest, ignore_errors=True)
        raise IntegrityError(where, "a gzip'd tar archive", f"unreadable ({exc})",
                             hint="the sources archive is corrupt or was tampered with; "
                                  "nothing was built from it") from None
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    actual = _combine(entries.items())
    if actual != expected:
        shutil.rmtree(dest, ignore_errors=True)
        raise IntegrityError(where, expected, actual,
                             hint="the published sources do not match the digest recorded "
                                  "for them; they are corrupt or were tampered with, and "
                                  "nothing was built from them")
    return len(entries)


def _extract(archive: Path, dest: Path, where: str) -> dict[str, bytes]:
    entries: dict[str, bytes] = {}
    total = 0
    with tarfile.open(archive, mode="r:gz") as tar:
        for member in tar:
            if member.type in (tarfile.XHDTYPE, tarfile.XGLTYPE):
                continue  # pax headers are applied by tarfile itself
            rel = _member_path(member, where)
            total += member.size
            if (rel in entries or len(entries) >= MAX_FILES or member.size > MAX_FILE_BYTES
                    or total > MAX_TOTAL_BYTES):
                raise IntegrityError(f"{where}: {rel[:200]!r}", "unique files within the "
                                     f"limits ({MAX_FILES} files, {MAX_TOTAL_BYTES >> 20} MiB)",
                                     "a duplicate or an oversized member",
                                     hint="the sources archive is malformed or hostile; "
                                          "nothing of it was used")
            src = tar.extractfile(member)
            assert src is not None  # a regular file
            entries[rel] = _copy_member(src, dest / rel, member.size, bool(member.mode & 0o111))
    return entries
