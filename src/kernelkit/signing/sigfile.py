"""``build/<variant>.kksig``: kernelkit's signatures of one variant's ``metadata.json``.

The file sits beside the variant directory, not in it: upstream ``kernels`` (0.17.2, 0.19.1)
refuses a variant holding any file its digest does not list (``Unknown file``) except
``metadata.json`` and ``metadata.json.sigstore``, and it lists only *directories* of ``build/``
as variants, so a file next to them is ignored by every upstream release. The format (JSON)::

    {"kernelkit-signature": 1,
     "metadata-sha256": "<hex of the signed metadata.json>",
     "signatures": [{"key": "ed25519:<base64 public key>", "signature": "<base64>"}]}

Each signature is Ed25519 over :func:`signed_message` (a fixed context string and the SHA-256 of
``metadata.json``'s exact bytes). The public key travels with the signature; the trust policy
and the lock name keys by fingerprint, which commits to that key, so a signature by any other
key never matches them. Several signatures may sign one ``metadata.json`` (key rotation: the new
key signs beside the old); ``metadata-sha256`` only lets a reader say "signed for another
metadata.json" instead of "invalid" and is never trusted on its own.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from pathlib import Path
from typing import NamedTuple

from kernelkit.errors import SignatureMaterialError, SigningKeyError
from kernelkit.signing.keys import parse_public_key

FORMAT = 1
SUFFIX = ".kksig"
MAX_SIGFILE_BYTES = 1 << 20
MAX_SIGNATURES = 64
CONTEXT = b"kernelkit-signature-v1\x00metadata.json\x00"


class Signature(NamedTuple):
    public_raw: bytes
    signature: bytes


class SigFile(NamedTuple):
    metadata_sha256: str
    signatures: tuple[Signature, ...]

    def dumps(self) -> bytes:
        from kernelkit.signing.keys import public_key_text

        data = {"kernelkit-signature": FORMAT, "metadata-sha256": self.metadata_sha256,
                "signatures": [{"key": public_key_text(s.public_raw),
                                "signature": base64.b64encode(s.signature).decode("ascii")}
                               for s in self.signatures]}
        return (json.dumps(data, indent=2) + "\n").encode("utf-8")


def signature_path(variant_dir: Path) -> Path:
    """``build/<variant>.kksig`` for ``build/<variant>/``."""
    return variant_dir.parent / f"{variant_dir.name}{SUFFIX}"


def hub_path(variant: str) -> str:
    return f"build/{variant}{SUFFIX}"


def signed_message(metadata_raw: bytes) -> bytes:
    return CONTEXT + hashlib.sha256(metadata_raw).digest()


def parse_sigfile(raw: bytes) -> SigFile:
    """Parse a signature file; ``SignatureMaterialError`` for anything else (bounded: at most
    ``MAX_SIGFILE_BYTES``, ``MAX_SIGNATURES`` signatures)."""
    if len(raw) > MAX_SIGFILE_BYTES:
        raise SignatureMaterialError(f"larger than {MAX_SIGFILE_BYTES} bytes")
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise SignatureMaterialError(f"not JSON ({str(exc).splitlines()[0][:80]})") from None
    if not isinstance(data, dict) or data.get("kernelkit-signature") != FORMAT:
        raise SignatureMaterialError(f"not a kernelkit signature file (format {FORMAT})")
    sha = data.get("metadata-sha256")
    sigs = data.get("signatures")
    if not isinstance(sha, str) or len(sha) != 64 or not _is_hex(sha):
        raise SignatureMaterialError("'metadata-sha256' must be 64 hex digits")
    if not isinstance(sigs, list) or not 1 <= len(sigs) <= MAX_SIGNATURES:
        raise SignatureMaterialError(f"'signatures' must be a list of 1 to {MAX_SIGNATURES}")
    return SigFile(sha, tuple(_signature(s, i) for i, s in enumerate(sigs)))


def _signature(entry: object, index: int) -> Signature:
    if not isinstance(entry, dict) or not isinstance(entry.get("key"), str) \
            or not isinstance(entry.get("signature"), str):
        raise SignatureMaterialError(f"signature {index} must be an object with a 'key' and a "
                                     "'signature'")
    try:
        public = parse_public_key(entry["key"], f"signature {index}")
        sig = base64.b64decode(entry["signature"], validate=True)
    except (SigningKeyError, ValueError, binascii.Error) as exc:
        raise SignatureMaterialError(f"signature {index}: {getattr(exc, 'message', exc)}") from None
    if len(sig) != 64:
        raise SignatureMaterialError(f"signature {index}: an Ed25519 signature has 64 bytes")
    return Signature(public, sig)


def _is_hex(text: str) -> bool:
    return all(c in "0123456789abcdef" for c in text)
