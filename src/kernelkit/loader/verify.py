"""Verify a variant directory against its digest, and keep a cheap verification receipt.

Full verification hashes every file and compares with ``metadata.json``'s digest. Afterwards a
*receipt* records, for each file, ``(size, mtime_ns, ctime_ns, inode)`` plus the SHA-256 of
``metadata.json``. A later process re-checks the receipt with one ``stat`` per file; only when
something differs does it hash again. ``ctime`` is part of the receipt because it cannot be set
from user space: a file rewritten in place with its ``mtime`` restored (``os.utime``) still
changes its ``ctime``, so it is caught.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path

from kernelkit.artifact.digest import Digest
from kernelkit.artifact.metadata import Metadata
from kernelkit.errors import IntegrityError
from kernelkit.util.fs import atomic_write_text

log = logging.getLogger(__name__)

RECEIPT_FORMAT = 1
Stats = dict[str, list[int]]


def scan(variant_dir: Path) -> Stats:
    """``relpath -> [size, mtime_ns, ctime_ns, inode]`` for every file of the variant except
    bytecode (``__pycache__``/``*.pyc``, which Python writes when it imports the variant)."""
    out: Stats = {}
    stack = [("", str(variant_dir))]
    while stack:
        prefix, directory = stack.pop()
        with os.scandir(directory) as entries:
            for e in entries:
                if e.is_dir(follow_symlinks=False):
                    if e.name != "__pycache__":
                        stack.append((f"{prefix}{e.name}/", e.path))
                elif not e.name.endswith(".pyc"):
                    st = e.stat()
                    out[prefix + e.name] = [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]
    return out


def verify_variant(variant_dir: Path, where: str, *, expected_metadata_sha256: str | None = None,
                   fallback: Digest | None = None) -> tuple[Metadata, Digest]:
    """Hash the variant's files and compare with its digest; raise ``IntegrityError`` naming the
    first bad file. Returns the metadata and the digest that was checked.

    ``expected_metadata_sha256`` (from a receipt) pins ``metadata.json`` itself. ``fallback`` is
    used for variants whose metadata has no digest (older builds): the digest computed when the
    variant was first downloaded (trust on first use).
    """
    meta_path = variant_dir / "metadata.json"
    if expected_metadata_sha256 is not None:
        actual = _sha256(meta_path)
        if actual != expected_metadata_sha256:
            raise IntegrityError(f"{where}/metadata.json", f"sha256:{expected_metadata_sha256}",
                                 f"sha256:{actual}")
    metadata = Metadata.read(meta_path)
    digest = metadata.digest or fallback
    if digest is None:
        log.warning("%s: metadata.json has no digest; its files cannot be verified "
                    "(rebuild the kernel with a current builder to add one)", where)
        return metadata, Digest.of_variant(variant_dir)
    violations = digest.verify(variant_dir)
    if violations:
        v = violations[0]
        raise IntegrityError(
            f"{where}/{v.path}",
            v.expected or "no such file in the digest",
            v.actual or "missing",
            hint=f"{len(violations)} file(s) do not match the published digest ({v}); "
                 "the variant is corrupt or was tampered with and was not imported",
        )
    return metadata, digest


def write_receipt(path: Path, variant_dir: Path, *, own_digest: Digest | None) -> None:
    """Record the stats of a just-verified variant. ``own_digest`` is stored only for variants
    whose metadata carries no digest."""
    data = {
        "format": RECEIPT_FORMAT,
        "metadata_sha256": _sha256(variant_dir / "metadata.json"),
        "digest": own_digest.to_json() if own_digest is not None else None,
        "files": scan(variant_dir),
    }
    atomic_write_text(path, json.dumps(data, separators=(",", ":")))


def read_receipt(path: Path) -> dict[str, object] | None:
    try:
        data = json.loads(path.read_bytes())
    except (FileNotFoundError, NotADirectoryError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != RECEIPT_FORMAT:
        return None
    return data


def receipt_matches(receipt: dict[str, object] | None, variant_dir: Path) -> bool:
    """Whether every file still has the size/mtime/ctime/inode recorded (no file added or gone)."""
    if receipt is None:
        return False
    try:
        return scan(variant_dir) == receipt.get("files")
    except FileNotFoundError:
        return False


def reverify(variant_dir: Path, receipt_path: Path, where: str) -> None:
    """The receipt no longer matches: hash again against the digest (and the pinned
    ``metadata.json``); on success write a fresh receipt, else raise ``IntegrityError``."""
    receipt = read_receipt(receipt_path) or {}
    pinned = receipt.get("metadata_sha256")
    fallback_json = receipt.get("digest")
    fallback = Digest.from_json(fallback_json) if isinstance(fallback_json, dict) else None
    metadata, digest = verify_variant(
        variant_dir, where,
        expected_metadata_sha256=pinned if isinstance(pinned, str) else None,
        fallback=fallback,
    )
    write_receipt(receipt_path, variant_dir, own_digest=None if metadata.digest else digest)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
