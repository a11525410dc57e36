"""``kernelkit sign``: sign the ``metadata.json`` of each variant of a build tree.

A variant is signed only when its files match its digest (a signature vouches for every file
through that digest, so signing a changed variant would vouch for the change). Signing again
with another key adds a signature beside the existing ones (key rotation: both stay valid while
a policy trusts both); signing again with the same key replaces its own; a signature file for
another ``metadata.json`` (the variant was rebuilt) is replaced whole.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from kernelkit.artifact.layout import discover_variants
from kernelkit.artifact.metadata import Metadata, load_json, read_bytes
from kernelkit.errors import IntegrityError, KernelkitError, SignatureMaterialError
from kernelkit.signing.keys import SigningKey
from kernelkit.signing.sigfile import (
    SigFile,
    Signature,
    parse_sigfile,
    signature_path,
    signed_message,
)
from kernelkit.util.fs import atomic_write_bytes


@dataclass(frozen=True)
class SignedVariant:
    variant: str
    path: Path  # the signature file written
    signers: tuple[str, ...]  # every key fingerprint now in it, the new one last


def sign_tree(path: Path, key: SigningKey) -> list[SignedVariant]:
    """Sign every variant of the build tree at ``path`` (a project, ``build/``, or one
    variant directory)."""
    tree = discover_variants(path, include_self=True)
    if tree is None:
        raise KernelkitError(f"no build variants found under {path}",
                             hint="build the kernel first (`kernelkit build`)")
    return [sign_variant(v, key) for v in tree.variants]


def sign_variant(variant_dir: Path, key: SigningKey) -> SignedVariant:
    raw = read_bytes(variant_dir / "metadata.json")
    check_sealed(variant_dir, raw)
    sha = hashlib.sha256(raw).hexdigest()
    mine = Signature(key.public_raw, key.sign(signed_message(raw)))
    out = signature_path(variant_dir)
    kept = [s for s in _existing(out, sha) if s.public_raw != key.public_raw]
    sigfile = SigFile(sha, (*kept, mine))
    atomic_write_bytes(out, sigfile.dumps())
    from kernelkit.signing.keys import fingerprint

    return SignedVariant(variant_dir.name, out,
                         tuple(fingerprint(s.public_raw) for s in sigfile.signatures))


def _existing(path: Path, sha: str) -> list[Signature]:
    """The signatures already made over this very ``metadata.json`` (none for another one, or
    for a file that is not a signature file)."""
    try:
        old = parse_sigfile(path.read_bytes())
    except (OSError, SignatureMaterialError):
        return []
    return list(old.signatures) if old.metadata_sha256 == sha else []


def check_sealed(variant_dir: Path, metadata_raw: bytes) -> Metadata:
    """The variant's files match its digest (``IntegrityError`` naming the first that does
    not); a variant without a digest cannot be signed."""
    meta = Metadata.loads(metadata_raw, variant_dir / "metadata.json")
    if meta.digest is None:
        raise IntegrityError(variant_dir / "metadata.json", "a digest of the variant's files",
                             "none", hint="the variant is not sealed: rebuild it with "
                                          "`kernelkit build` before signing it")
    bad_meta = meta.digest.check_metadata(load_json(metadata_raw, variant_dir / "metadata.json"))
    problems = ([bad_meta] if bad_meta else []) + meta.digest.verify(variant_dir)
    if problems:
        first = problems[0]
        raise IntegrityError(variant_dir / first.path, first.expected or "no such file",
                             first.actual or "missing",
                             hint=f"variant {variant_dir.name} does not match its digest "
                                  f"({first}); nothing was signed: rebuild it")
    return meta
