"""Verify a variant directory against the digest in its ``metadata.json``.

Used before a download is moved into the cache (so nothing unverified is ever imported) and
when a cached variant's receipt (``receipt.py``) no longer matches.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path
from typing import NamedTuple

from kernelkit.artifact.digest import Digest
from kernelkit.artifact.metadata import Metadata, load_json, read_bytes
from kernelkit.errors import IntegrityError
from kernelkit.loader.receipt import read_receipt, write_receipt

log = logging.getLogger(__name__)


class Verified(NamedTuple):
    """A variant that matched its digest: its metadata, the digest checked, and the exact
    ``metadata.json`` bytes that were verified (read once, reused for the receipt)."""

    metadata: Metadata
    digest: Digest
    metadata_raw: bytes


def verify_variant(variant_dir: Path, where: str, *, expected_metadata_sha256: str | None = None,
                   fallback: Digest | None = None) -> Verified:
    """Hash the variant's files and compare with its digest; raise ``IntegrityError`` naming the
    first bad file.

    ``expected_metadata_sha256`` (from a receipt) pins ``metadata.json`` itself. ``fallback``
    (from a receipt written by an older kernelkit, which trusted digest-less variants on first
    use) is used for a cached variant whose metadata has no digest; a *download* without a
    digest is refused.
    """
    meta_path = variant_dir / "metadata.json"
    raw = read_bytes(meta_path)  # bounded, regular files only; MetadataError otherwise
    if expected_metadata_sha256 is not None:
        actual = hashlib.sha256(raw).hexdigest()
        if actual != expected_metadata_sha256:
            raise IntegrityError(f"{where}/metadata.json", f"sha256:{expected_metadata_sha256}",
                                 f"sha256:{actual}")
    metadata = Metadata.loads(raw, meta_path)  # every parse error becomes a MetadataError
    digest = metadata.digest or fallback
    if digest is None:  # fail closed: nothing says what the files should be
        raise IntegrityError(
            f"{where}/metadata.json", "a digest of the variant's files", "none",
            hint="the variant's metadata.json has no digest, so its files cannot be verified "
                 "and it was not imported; ask the publisher to rebuild it with a current "
                 "builder (or inspect it and load it with get_local_kernel)")
    bad_meta = (digest.check_metadata(load_json(raw, meta_path))
                if metadata.digest is not None else None)
    violations = ([bad_meta] if bad_meta else []) + digest.verify(variant_dir)
    if violations:
        v = violations[0]
        raise IntegrityError(
            f"{where}/{v.path}",
            v.expected or "no such file in the digest",
            v.actual or "missing",
            hint=f"{len(violations)} file(s) do not match the published digest ({v}); "
                 "the variant is corrupt or was tampered with and was not imported",
        )
    return Verified(metadata, digest, raw)




def reverify(variant_dir: Path, receipt_path: Path, where: str) -> None:
    """The receipt no longer matches: hash again against the digest (and the pinned
    ``metadata.json``); on success write a fresh receipt, else raise ``IntegrityError``."""
    receipt = read_receipt(receipt_path) or {}
    pinned = receipt.get("metadata_sha256")
    fallback_json = receipt.get("digest")
    fallback = Digest.from_json(fallback_json) if isinstance(fallback_json, dict) else None
    verified = verify_variant(
        variant_dir, where,
        expected_metadata_sha256=pinned if isinstance(pinned, str) else None,
        fallback=fallback,
    )
    write_receipt(receipt_path, variant_dir,
                  own_digest=None if verified.metadata.digest else verified.digest,
                  metadata_raw=verified.metadata_raw)
