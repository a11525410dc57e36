"""Who really signed a ``metadata.json``: the cryptography, no policy.

:func:`collect` checks every signature a variant carries (kernelkit's ``.kksig`` and upstream's
``metadata.json.sigstore``) against the exact bytes of ``metadata.json`` and returns
:class:`Signers`: the identities whose signature verified, those whose did not, and what could
not be read. Whether a verified identity may publish is :mod:`kernelkit.signing.policy`'s call.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from kernelkit.errors import SignatureMaterialError
from kernelkit.signing.sigfile import parse_sigfile, signed_message
from kernelkit.signing.signers import Signer, Signers


def ed25519_signers(metadata_raw: bytes, sigfile_raw: bytes) -> Signers:
    """Check kernelkit's signature file against ``metadata.json``'s exact bytes."""
    from kernelkit.signing.keys import fingerprint, verify_ed25519

    try:
        sigfile = parse_sigfile(sigfile_raw)
    except SignatureMaterialError as exc:
        return Signers(problems=(f"unreadable signature file ({exc})",))
    message = signed_message(metadata_raw)
    valid: list[Signer] = []
    invalid: list[str] = []
    for sig in sigfile.signatures:
        fp = fingerprint(sig.public_raw)
        if verify_ed25519(sig.public_raw, sig.signature, message):
            valid.append(Signer(fp))
        else:
            invalid.append(fp)
    return Signers(tuple(valid), tuple(invalid))


def sigstore_signers(metadata_raw: bytes, bundle_raw: bytes, *,
                     trusted_root: Path | None = None) -> Signers:
    """Check upstream's sigstore bundle (``sigstore`` package, offline trust root)."""
    from kernelkit.signing.sigstore_bundle import verify_bundle

    try:
        return Signers(valid=(verify_bundle(metadata_raw, bundle_raw,
                                            trusted_root=trusted_root),))
    except SignatureMaterialError as exc:
        if exc.invalid_signature:
            return Signers(invalid=(exc.identity or "sigstore",), problems=(str(exc),))
        return Signers(problems=(str(exc),))


def collect(metadata_raw: bytes, *, sigfile_raw: bytes | None, bundle_raw: bytes | None,
            trusted_root: Path | None = None) -> Signers:
    """Every signature the variant carries, checked (empty ``Signers``: unsigned)."""
    parts = []
    if sigfile_raw is not None:
        parts.append(ed25519_signers(metadata_raw, sigfile_raw))
    if bundle_raw is not None:
        parts.append(sigstore_signers(metadata_raw, bundle_raw, trusted_root=trusted_root))
    return Signers(tuple(s for p in parts for s in p.valid),
                   tuple(i for p in parts for i in p.invalid),
                   tuple(x for p in parts for x in p.problems))


def material_digest(metadata_raw: bytes, sigfile_raw: bytes | None,
                    bundle_raw: bytes | None) -> str:
    """SHA-256 over what a verification depends on: the key of a remembered result."""
    h = hashlib.sha256()
    for part in (metadata_raw, sigfile_raw, bundle_raw):
        if part is None:
            h.update(b"\x00")
        else:
            h.update(b"\x01" + len(part).to_bytes(8, "big"))
            h.update(part)
    return h.hexdigest()
