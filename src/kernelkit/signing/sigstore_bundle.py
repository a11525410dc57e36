"""Upstream's signatures: ``metadata.json.sigstore``, a sigstore bundle over ``metadata.json``.

Verified with the optional ``sigstore`` package (imported only here), offline: against the
trust root the package ships (Sigstore's public instance, no TUF refresh) or a trust root
file of your own (``KERNELKIT_SIGSTORE_TRUSTED_ROOT``: a private Sigstore deployment). The
bundle's certificate chain, its certificate transparency timestamp, its transparency log entry
and the signature over ``metadata.json`` are checked by ``sigstore``'s ``Verifier`` with no
identity policy; the identity (OIDC issuer, source repository, workflow) is then read from the
certificate and judged by :mod:`kernelkit.signing.policy`, as upstream's
``GitHubWorkflowPolicy`` does.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from kernelkit.errors import SignatureMaterialError
from kernelkit.signing.signers import Signer

if TYPE_CHECKING:
    from sigstore.verify import Verifier

BUNDLE_NAME = "metadata.json.sigstore"
MAX_BUNDLE_BYTES = 1 << 20
SIGSTORE_HINT = 'to verify it: pip install "kernelkit[sigstore]"'

# Fulcio's certificate extensions (sigstore's OID registry, 1.3.6.1.4.1.57264.1.*)
_ISSUER_V1 = "1.3.6.1.4.1.57264.1.1"
_ISSUER_V2 = "1.3.6.1.4.1.57264.1.8"
_BUILD_SIGNER = "1.3.6.1.4.1.57264.1.9"
_SOURCE_REPO = "1.3.6.1.4.1.57264.1.12"


def verify_bundle(metadata_raw: bytes, bundle_raw: bytes, *,
                  trusted_root: Path | None = None) -> Signer:
    """The workflow identity that signed ``metadata_raw``; ``SignatureMaterialError`` otherwise."""
    if len(bundle_raw) > MAX_BUNDLE_BYTES:
        raise SignatureMaterialError(
            f"unreadable sigstore bundle (larger than {MAX_BUNDLE_BYTES} bytes)")
    try:
        from sigstore.errors import VerificationError
        from sigstore.models import Bundle
    except ImportError:
        raise SignatureMaterialError("a sigstore bundle is present but the sigstore package is not "
                          f"installed ({SIGSTORE_HINT})") from None
    try:
        bundle = Bundle.from_json(bundle_raw)
        signer = signer_of(bundle.signing_certificate)
    except Exception as exc:  # hostile bytes: any parse failure is "unreadable"
        raise SignatureMaterialError(f"unreadable sigstore bundle ({_one_line(exc)})") from None
    verifier = _verifier(trusted_root)
    try:
        verifier.verify_artifact(metadata_raw, bundle, _IdentityJudgedLater())
    except VerificationError as exc:
        raise SignatureMaterialError(f"sigstore bundle by {signer.identity} does not verify "
                          f"({_one_line(exc)})", invalid_signature=True,
                          identity=signer.identity) from None
    return signer


class _IdentityJudgedLater:
    """The identity policy given to ``Verifier``: none (sigstore's ``UnsafeNoOp`` without its
    warning); :func:`signer_of` reads the identity and ``kernelkit.signing.policy`` judges it."""

    def verify(self, cert: object) -> None:
        return None


def _verifier(trusted_root: Path | None) -> Verifier:
    import logging

    from sigstore.verify import Verifier

    if trusted_root is None:
        # the trust root the package ships: no TUF refresh, no network ("offline mode" logs
        # a warning on sigstore's logger each time; it says nothing the caller can act on)
        tuf_log = logging.getLogger("sigstore._internal.tuf")
        level = tuf_log.level
        tuf_log.setLevel(logging.ERROR)
        try:
            return Verifier.production(offline=True)
        finally:
            tuf_log.setLevel(level)
    from sigstore.models import TrustedRoot

    try:
        return Verifier(trusted_root=TrustedRoot.from_file(str(trusted_root)))
    except Exception as exc:
        raise SignatureMaterialError(f"cannot read the sigstore trust root {trusted_root} "
                          f"({_one_line(exc)})") from None


def signer_of(cert: object) -> Signer:
    """``sigstore:<workflow URI>`` and the certificate's OIDC claims."""
    claims = {name: value for name, value in (
        ("issuer", _ext(cert, _ISSUER_V2, der=True) or _ext(cert, _ISSUER_V1, der=False)),
        ("source-repository", _ext(cert, _SOURCE_REPO, der=True)),
        ("build-signer", _ext(cert, _BUILD_SIGNER, der=True)),
    ) if value is not None}
    who = claims.get("build-signer") or _san(cert) or "unknown identity"
    return Signer(f"sigstore:{who}", tuple(sorted(claims.items())))


def _ext(cert: object, oid: str, *, der: bool) -> str | None:
    from cryptography import x509

    try:
        ext = cert.extensions.get_extension_for_oid(x509.ObjectIdentifier(oid))  # type: ignore[attr-defined]
    except x509.ExtensionNotFound:
        return None
    raw: bytes = ext.value.value
    if der:  # a DER UTF8String: tag 0x0c, a length, the text
        raw = _der_utf8(raw)
    text = raw.decode("utf-8", "replace")
    return text if text.isprintable() else None


def _der_utf8(raw: bytes) -> bytes:
    if len(raw) < 2 or raw[0] != 0x0C:
        return b""
    n, start = raw[1], 2
    if n & 0x80:
        width = n & 0x7F
        n, start = int.from_bytes(raw[2:2 + width], "big"), 2 + width
    return raw[start:start + n]


def _san(cert: object) -> str | None:
    from cryptography import x509

    try:
        san = cert.extensions.get_extension_for_class(  # type: ignore[attr-defined]
            x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return None
    names = [str(v) for v in san.get_values_for_type(x509.UniformResourceIdentifier)]
    names += [str(v) for v in san.get_values_for_type(x509.RFC822Name)]
    return names[0] if names else None


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:200]
