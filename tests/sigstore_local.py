"""A Sigstore instance of the tests' own, in memory, standing in for the public services
(Fulcio, the certificate transparency log, Rekor), which cannot be reached here.

:class:`LocalSigstore` makes three fresh keys: a certificate authority (Fulcio's role), a
certificate transparency log and a transparency log (Rekor's role); :meth:`trusted_root` is the
``trusted_root.json`` naming them, and :meth:`sign` returns a sigstore bundle (v0.3) over an
artifact: a short-lived signing certificate carrying the GitHub Actions OIDC claims a workflow
run gets (issuer, source repository, workflow URI), with an embedded signed certificate
timestamp (RFC 6962, over the precertificate), a ``hashedrekord`` log entry with its signed
entry timestamp (over RFC 8785 canonical JSON) and an inclusion proof whose checkpoint is a
signed note. Every signature is real; ``sigstore``'s own ``Verifier`` checks them all, given
this trusted root instead of the public one. Only the public instance's keys are missing.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json
import struct
from pathlib import Path
from typing import Any

GITHUB_ISSUER = "https://token.actions.githubusercontent.com"
WORKFLOW = "https://github.com/acme/kernels/.github/workflows/build.yaml@refs/heads/main"
_LOG_NAME = "rekor.local.test"


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _der_length(n: int) -> bytes:
    if n < 0x80:
        return bytes([n])
    body = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(body)]) + body


def _der(tag: int, content: bytes) -> bytes:
    return bytes([tag]) + _der_length(len(content)) + content


def _spki(key: Any) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return key.public_key().public_bytes(serialization.Encoding.DER,
                                         serialization.PublicFormat.SubjectPublicKeyInfo)


class LocalSigstore:
    def __init__(self) -> None:
        from cryptography.hazmat.primitives.asymmetric import ec

        self.now = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
        self.ca_key = ec.generate_private_key(ec.SECP256R1())
        self.ct_key = ec.generate_private_key(ec.SECP256R1())
        self.log_key = ec.generate_private_key(ec.SECP256R1())
        self.ca = self._ca_certificate()

    # --- the trust root ------------------------------------------------------------------------

    def _ca_certificate(self) -> Any:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes
        from cryptography.x509.oid import NameOID

        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kernelkit test CA")])
        key = self.ca_key.public_key()
        return (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key)
                .serial_number(1)
                .not_valid_before(self.now - dt.timedelta(days=30))
                .not_valid_after(self.now + dt.timedelta(days=30))
                .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
                .add_extension(x509.KeyUsage(False, False, False, False, False, True, True,
                                             None, None), critical=True)
                .add_extension(x509.SubjectKeyIdentifier.from_public_key(key), critical=False)
                .sign(self.ca_key, hashes.SHA256()))

    def _log(self, key: Any, url: str) -> dict[str, Any]:
        start = (self.now - dt.timedelta(days=30)).strftime("%Y-%m-%dT%H:%M:%SZ")
        return {"baseUrl": url, "hashAlgorithm": "SHA2_256",
                "logId": {"keyId": _b64(hashlib.sha256(_spki(key)).digest())},
                "publicKey": {"rawBytes": _b64(_spki(key)),
                              "keyDetails": "PKIX_ECDSA_P256_SHA_256",
                              "validFor": {"start": start}}}

    def trusted_root(self) -> str:
        from cryptography.hazmat.primitives import serialization

        start = (self.now - dt.timedelta(days=30)).strftime("%Y-%m-%dT%H:%M:%SZ")
        return json.dumps({
            "mediaType": "application/vnd.dev.sigstore.trustedroot+json;version=0.1",
            "tlogs": [self._log(self.log_key, f"https://{_LOG_NAME}")],
            "ctlogs": [self._log(self.ct_key, "https://ct.local.test")],
            "certificateAuthorities": [{
                "subject": {"organization": "kernelkit tests", "commonName": "kernelkit test CA"},
                "uri": "https://ca.local.test",
                "certChain": {"certificates": [
                    {"rawBytes": _b64(self.ca.public_bytes(serialization.Encoding.DER))}]},
                "validFor": {"start": start}}],
        }, indent=2)

    def write_trusted_root(self, path: Path) -> Path:
        path.write_text(self.trusted_root())
        return path

    # --- signing ----------------------------------------------------------------------------------

    def _leaf(self, signing_key: Any, *, issuer: str, repository: str, workflow: str) -> Any:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes
        from cryptography.x509.oid import ExtendedKeyUsageOID, ExtensionOID

        def claim(oid: str, value: bytes) -> x509.UnrecognizedExtension:
            return x509.UnrecognizedExtension(x509.ObjectIdentifier(oid), value)

        builder = (
            x509.CertificateBuilder().subject_name(x509.Name([]))
            .issuer_name(self.ca.subject).public_key(signing_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(self.now - dt.timedelta(minutes=1))
            .not_valid_after(self.now + dt.timedelta(minutes=10))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(True, False, False, False, False, False, False, None,
                                         None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CODE_SIGNING]), False)
            .add_extension(x509.SubjectAlternativeName(
                [x509.UniformResourceIdentifier(workflow)]), critical=True)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
                self.ca_key.public_key()), critical=False)
            .add_extension(claim("1.3.6.1.4.1.57264.1.1", issuer.encode()), False)
            .add_extension(claim("1.3.6.1.4.1.57264.1.8", _der(0x0C, issuer.encode())), False)
            .add_extension(claim("1.3.6.1.4.1.57264.1.9", _der(0x0C, workflow.encode())), False)
            .add_extension(claim("1.3.6.1.4.1.57264.1.12",
                                 _der(0x0C, f"https://github.com/{repository}".encode())), False)
        )
        precert_tbs = builder.sign(self.ca_key, hashes.SHA256()).tbs_certificate_bytes
        sct_list = self._sct_list(precert_tbs)
        cert = builder.add_extension(x509.UnrecognizedExtension(
            ExtensionOID.PRECERT_SIGNED_CERTIFICATE_TIMESTAMPS, _der(0x04, sct_list)),
            False).sign(self.ca_key, hashes.SHA256())
        assert cert.tbs_precertificate_bytes == precert_tbs
        return cert

    def _sct_list(self, precert_tbs: bytes) -> bytes:
        """RFC 6962 §3.2: the log signs (version, type, timestamp, precert entry)."""
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec

        millis = int(self.now.timestamp() * 1000)
        signed = (struct.pack("!BBQH", 0, 0, millis, 1)
                  + hashlib.sha256(_spki(self.ca_key)).digest()
                  + len(precert_tbs).to_bytes(3, "big") + precert_tbs + b"\x00\x00")
        sig = self.ct_key.sign(signed, ec.ECDSA(hashes.SHA256()))
        sct = (b"\x00" + hashlib.sha256(_spki(self.ct_key)).digest()
               + struct.pack("!QH", millis, 0) + struct.pack("!BBH", 4, 3, len(sig)) + sig)
        return struct.pack("!HH", len(sct) + 2, len(sct)) + sct

    def sign(self, artifact: bytes, *, issuer: str = GITHUB_ISSUER,
             repository: str = "acme/kernels", workflow: str = WORKFLOW) -> bytes:
        """A sigstore bundle (JSON bytes) over ``artifact``, from a run of ``workflow``."""
        import rfc8785
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec

        key = ec.generate_private_key(ec.SECP256R1())
        cert = self._leaf(key, issuer=issuer, repository=repository, workflow=workflow)
        digest = hashlib.sha256(artifact).digest()
        signature = key.sign(artifact, ec.ECDSA(hashes.SHA256()))
        pem = cert.public_bytes(serialization.Encoding.PEM)
        body = rfc8785.dumps({
            "apiVersion": "0.0.1", "kind": "hashedrekord",
            "spec": {"data": {"hash": {"algorithm": "sha256", "value": digest.hex()}},
                     "signature": {"content": _b64(signature),
                                   "publicKey": {"content": _b64(pem)}}}})
        return json.dumps({
            "mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json",
            "verificationMaterial": {
                "certificate": {"rawBytes": _b64(cert.public_bytes(serialization.Encoding.DER))},
                "tlogEntries": [self._log_entry(body)]},
            "messageSignature": {"messageDigest": {"algorithm": "SHA2_256",
                                                   "digest": _b64(digest)},
                                 "signature": _b64(signature)},
        }).encode()

    def _log_entry(self, body: bytes) -> dict[str, Any]:
        """The entry at index 0 of a one-entry log: signed entry timestamp and checkpoint."""
        import rfc8785
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec

        log_id = hashlib.sha256(_spki(self.log_key)).digest()
        when = int(self.now.timestamp())
        promise = self.log_key.sign(rfc8785.dumps({"body": _b64(body), "integratedTime": when,
                                                   "logID": log_id.hex(), "logIndex": 0}),
                                    ec.ECDSA(hashes.SHA256()))
        root = hashlib.sha256(b"\x00" + body).digest()  # a one-leaf tree: the leaf hash
        note = f"{_LOG_NAME}\n1\n{_b64(root)}\n"
        note_sig = self.log_key.sign(note.encode(), ec.ECDSA(hashes.SHA256()))
        checkpoint = note + f"\n\u2014 {_LOG_NAME} {_b64(log_id[:4] + note_sig)}\n"
        return {"logIndex": "0", "logId": {"keyId": _b64(log_id)},
                "kindVersion": {"kind": "hashedrekord", "version": "0.0.1"},
                "integratedTime": str(when), "canonicalizedBody": _b64(body),
                "inclusionPromise": {"signedEntryTimestamp": _b64(promise)},
                "inclusionProof": {"logIndex": "0", "rootHash": _b64(root), "treeSize": "1",
                                   "hashes": [], "checkpoint": {"envelope": checkpoint}}}
