"""Ed25519 publisher keys: generate, read, and name them by a fingerprint.

A private key is a PKCS#8 PEM file (mode 0600, unencrypted, as ``ssh-keygen -N ''`` writes);
its public half is ``<key>.pub``: one line ``ed25519:<base64 of the 32 raw bytes> <comment>``.
A key is named by its fingerprint, ``ed25519:SHA256:<unpadded base64 of SHA-256(raw public
key)>`` (OpenSSH's style), which is what a trust policy, a lock and an error message show.

``cryptography`` (the ``sign`` extra) is imported only by the functions that need a key object;
the fingerprint and public-key text helpers use ``hashlib`` and ``base64`` alone.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from kernelkit.errors import SigningKeyError

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

KEY_TYPE = "ed25519"
FINGERPRINT_PREFIX = "ed25519:SHA256:"
FINGERPRINT_RE = re.compile(r"ed25519:SHA256:[A-Za-z0-9+/]{43}\Z")
_PUBLIC_RE = re.compile(r"ed25519:([A-Za-z0-9+/]{43}=)(?:\s.*)?\Z", re.DOTALL)
MAX_KEY_BYTES = 64 << 10
INSTALL_HINT = 'install the signing extra: pip install "kernelkit[sign]" (the cryptography package)'


def fingerprint(public_raw: bytes) -> str:
    """``ed25519:SHA256:<43 base64 characters>`` of a raw 32-byte public key."""
    digest = hashlib.sha256(public_raw).digest()
    return FINGERPRINT_PREFIX + base64.b64encode(digest).decode("ascii").rstrip("=")


def is_fingerprint(value: object) -> bool:
    return isinstance(value, str) and FINGERPRINT_RE.match(value) is not None


def public_key_text(public_raw: bytes) -> str:
    """``ed25519:<base64>``: how a public key is written in ``.pub`` files and signatures."""
    return f"{KEY_TYPE}:{base64.b64encode(public_raw).decode('ascii')}"


def parse_public_key(text: str, source: str) -> bytes:
    """The raw 32 bytes of ``ed25519:<base64> [comment]``; ``SigningKeyError`` otherwise."""
    m = _PUBLIC_RE.match(text.strip())
    raw = _b64(m.group(1)) if m else None
    if raw is None or len(raw) != 32:
        raise SigningKeyError(f"{source}: not an Ed25519 public key ('ed25519:<base64 of 32 "
                              "bytes>')", hint="use the .pub file `kernelkit keygen` wrote")
    return raw


def _b64(text: str) -> bytes | None:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None


class SigningKey(NamedTuple):
    """A private key read from a file (or a CI secret) and what names it."""

    private: Ed25519PrivateKey
    public_raw: bytes
    source: str

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.public_raw)

    @property
    def public_text(self) -> str:
        return public_key_text(self.public_raw)

    def sign(self, message: bytes) -> bytes:
        return self.private.sign(message)


def default_key_path(env: Mapping[str, str]) -> Path:
    """``$XDG_CONFIG_HOME/kernelkit/signing-key.pem`` (``~/.config`` when unset)."""
    from kernelkit.util.paths import user_config_dir

    return user_config_dir(env) / "signing-key.pem"


def _crypto() -> None:
    try:
        import cryptography  # noqa: F401
    except ImportError:
        raise SigningKeyError("signing needs the cryptography package, which is not "
                              "installed", hint=INSTALL_HINT) from None


def generate_key(path: Path, *, comment: str = "", force: bool = False) -> SigningKey:
    """Write a new private key to ``path`` (0600) and its public key to ``path.pub``."""
    _crypto()
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from kernelkit.util.fs import atomic_write_bytes

    pub = public_path(path)
    for target in (path, pub):
        if target.exists() and not force:
            raise SigningKeyError(f"{target} already exists",
                                  hint="pass --force to replace it (signatures made with the "
                                       "old key stay valid only while a policy trusts it)")
    private = Ed25519PrivateKey.generate()
    pem = private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    atomic_write_bytes(path, pem, mode=0o600)
    key = _key_of(private, str(path))
    line = key.public_text + (f" {comment}" if comment else "") + "\n"
    atomic_write_bytes(pub, line.encode("utf-8"), mode=0o644)
    return key


def public_path(path: Path) -> Path:
    return path.with_name(path.name + ".pub")


def load_key_file(path: Path) -> SigningKey:
    """The private key in ``path``; ``SigningKeyError`` names the file and what is wrong."""
    from kernelkit.util.inputs import read_input

    try:
        data = read_input(path, MAX_KEY_BYTES)
    except (FileNotFoundError, NotADirectoryError):
        raise SigningKeyError(f"no signing key at {path}",
                              hint="create one with `kernelkit keygen`, or pass --key FILE") \
            from None
    except OSError as exc:
        raise SigningKeyError(f"{path}: cannot read the signing key ({exc})") from None
    if os.name == "posix" and path.stat().st_mode & 0o077:
        raise SigningKeyError(f"{path}: the signing key is readable by other users",
                              hint=f"chmod 600 {path}")
    return key_from_pem(data, str(path))


def key_from_pem(data: bytes, source: str) -> SigningKey:
    """A private key from PEM text (a key file, or the ``KERNELKIT_SIGNING_KEY`` secret)."""
    _crypto()
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    try:
        private = serialization.load_pem_private_key(data.strip() + b"\n", password=None)
    except (ValueError, TypeError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise SigningKeyError(f"{source}: not an unencrypted PEM private key ({first[:120]})",
                              hint="use a key written by `kernelkit keygen`") from None
    if not isinstance(private, Ed25519PrivateKey):
        raise SigningKeyError(f"{source}: not an Ed25519 key ({type(private).__name__})",
                              hint="kernelkit signs with Ed25519 keys: `kernelkit keygen`")
    return _key_of(private, source)


def _key_of(private: Ed25519PrivateKey, source: str) -> SigningKey:
    from cryptography.hazmat.primitives import serialization

    raw = private.public_key().public_bytes(serialization.Encoding.Raw,
                                            serialization.PublicFormat.Raw)
    return SigningKey(private, raw, source)


def verify_ed25519(public_raw: bytes, signature: bytes, message: bytes) -> bool:
    """Whether ``signature`` is ``public_raw``'s Ed25519 signature of ``message``."""
    _crypto()
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        Ed25519PublicKey.from_public_bytes(public_raw).verify(signature, message)
    except (InvalidSignature, ValueError):
        return False
    return True
