"""kernelkit.signing: keys, signature files, the trust policy and its verdicts (real Ed25519
keys; no hub)."""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

import pytest

from kernelkit.errors import SignatureError, SignatureMaterialError, SigningKeyError
from kernelkit.signing.keys import (
    FINGERPRINT_RE,
    fingerprint,
    generate_key,
    key_from_pem,
    load_key_file,
    parse_public_key,
    public_path,
)
from kernelkit.signing.policy import EMPTY, judge, parse_policy, read_policy
from kernelkit.signing.sigfile import parse_sigfile
from kernelkit.signing.signers import Signer, Signers
from kernelkit.signing.verify import collect, ed25519_signers

META = b'{"name": "demo", "id": "_demo_cpu_abc", "version": 1}'


@pytest.fixture
def key_path(tmp_path: Path) -> Path:
    path = tmp_path / "keys" / "k.pem"
    generate_key(path, comment="ci@acme")
    return path


def sigfile_for(key_file: Path, metadata: bytes = META) -> bytes:
    """A signature file made by the real signer over a throwaway variant's metadata bytes."""
    import hashlib

    from kernelkit.signing.sigfile import SigFile, Signature, signed_message

    key = load_key_file(key_file)
    return SigFile(hashlib.sha256(metadata).hexdigest(),
                   (Signature(key.public_raw, key.sign(signed_message(metadata))),)).dumps()


def test_keygen_writes_a_private_key_only_its_owner_reads_and_a_public_line(
        key_path: Path) -> None:
    assert stat.S_IMODE(key_path.stat().st_mode) == 0o600
    pub = public_path(key_path).read_text()
    assert pub.startswith("ed25519:") and pub.rstrip().endswith("ci@acme")
    key = load_key_file(key_path)
    assert parse_public_key(pub, "pub") == key.public_raw
    assert FINGERPRINT_RE.match(key.fingerprint)
    assert key.fingerprint == fingerprint(key.public_raw)
    with pytest.raises(SigningKeyError, match="already exists"):
        generate_key(key_path)
    assert load_key_file(key_path).fingerprint == key.fingerprint  # nothing was replaced


def test_key_files_that_cannot_be_used_are_named(tmp_path: Path, key_path: Path) -> None:
    with pytest.raises(SigningKeyError, match="no signing key at"):
        load_key_file(tmp_path / "missing.pem")
    os.chmod(key_path, 0o644)
    with pytest.raises(SigningKeyError, match="readable by other users"):
        load_key_file(key_path)
    with pytest.raises(SigningKeyError, match="not an unencrypted PEM private key"):
        key_from_pem(b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", "secret")
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    pem = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption())
    with pytest.raises(SigningKeyError, match="not an Ed25519 key"):
        key_from_pem(pem, "secret")


def test_a_signature_verifies_over_exactly_the_signed_bytes(key_path: Path,
                                                            tmp_path: Path) -> None:
    raw = sigfile_for(key_path)
    fp = load_key_file(key_path).fingerprint
    assert ed25519_signers(META, raw).identities == (fp,)
    changed = ed25519_signers(META.replace(b"1", b"2"), raw)
    assert changed.valid == () and changed.invalid == (fp,)
    other = tmp_path / "other.pem"
    generate_key(other)
    both = json.loads(raw)
    both["signatures"] += json.loads(sigfile_for(other))["signatures"]
    rotated = ed25519_signers(META, json.dumps(both).encode())
    assert set(rotated.identities) == {fp, load_key_file(other).fingerprint}


@pytest.mark.parametrize(("raw", "why"), [
    (b"", "not JSON"),
    (b"[]", "not a kernelkit signature file"),
    (b'{"kernelkit-signature": 1, "metadata-sha256": "x", "signatures": []}', "64 hex"),
    (b'{"kernelkit-signature": 1, "metadata-sha256": "' + b"a" * 64 + b'", "signatures": []}',
     "list of 1 to"),
    (b'{"kernelkit-signature": 1, "metadata-sha256": "' + b"a" * 64
     + b'", "signatures": [{"key": "ed25519:AAAA", "signature": "AA=="}]}', "Ed25519 public"),
    (b"{" * 100000, "not JSON"),
    (b" " * (2 << 20), "larger than"),
])
def test_malformed_signature_files_are_refused_with_a_reason(raw: bytes, why: str) -> None:
    with pytest.raises(SignatureMaterialError, match=why):
        parse_sigfile(raw)
    assert collect(META, sigfile_raw=raw, bundle_raw=None).problems[0].startswith(
        "unreadable signature file")


def test_a_truncated_signature_file_is_unreadable_not_unsigned(key_path: Path) -> None:
    raw = sigfile_for(key_path)
    for cut in (1, len(raw) // 2, len(raw) - 3):
        signers = collect(META, sigfile_raw=raw[:cut], bundle_raw=None)
        assert signers.signed and not signers.valid


def policy_of(text: str) -> object:
    import tomllib

    return parse_policy(tomllib.loads(text), "trust.toml")


FP_A = "ed25519:SHA256:" + "A" * 43
FP_B = "ed25519:SHA256:" + "B" * 43
WORKFLOW = "https://github.com/acme/kernels/.github/workflows/build.yaml@refs/heads/main"


@pytest.mark.parametrize(("text", "field"), [
    ("orgs = 1", "orgs"),
    ("[orgs.acme]\nkeys = ['ed25519:abc']", "orgs.acme.keys"),
    ("[orgs.acme]\nkeys = []", "orgs.acme lists no identity"),
    ("[orgs.acme]\nkey = []", "orgs.acme.key unknown field"),
    ("require-signature = 'yes'", "require-signature"),
    ("revoked = ['x']", "revoked"),
    (("[[orgs.acme.sigstore]]\nrepository = 'acme/kernels'\nworkflows = ['https://github.com/"
      "other/x/.github/workflows/a.yml@refs/heads/main']"), "workflows"),
    ("[orgs.'a b']\nkeys = []", "not an organisation name"),
])
def test_policy_errors_name_the_field(text: str, field: str) -> None:
    with pytest.raises(SigningKeyError, match=re.escape(field)):
        policy_of(text)


def test_a_policy_file_is_read_bounded_and_a_missing_one_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(SigningKeyError, match="does not exist"):
        read_policy(tmp_path / "trust.toml")
    (tmp_path / "trust.toml").write_text("[orgs.acme\n")
    with pytest.raises(SigningKeyError, match=r"trust\.toml"):
        read_policy(tmp_path / "trust.toml")


def test_judge_accepts_only_a_listed_unrevoked_identity() -> None:
    policy = policy_of(f'revoked = ["{FP_B}"]\n[orgs.acme]\nkeys = ["{FP_A}", "{FP_B}"]\n')
    good = Signers(valid=(Signer(FP_A),))
    assert judge(policy, good, repo_id="acme/relu", variant="v").signer == FP_A
    with pytest.raises(SignatureError) as revoked:
        judge(policy, Signers(valid=(Signer(FP_B),)), repo_id="acme/relu", variant="v")
    assert "revoked" in revoked.value.message and revoked.value.found == FP_B
    with pytest.raises(SignatureError) as unsigned:
        judge(policy, Signers(), repo_id="acme/relu", variant="torch213-cxx11-cpu-x86_64-linux")
    message = unsigned.value.message
    assert "\n" not in message and "torch213-cxx11-cpu-x86_64-linux" in message
    assert FP_A in message and unsigned.value.found == "unsigned"
    with pytest.raises(SignatureError, match=r"does not match metadata\.json"):
        judge(policy, Signers(invalid=(FP_A,)), repo_id="acme/relu", variant="v")


def test_an_org_not_in_the_policy_loads_as_before_unless_signatures_are_required() -> None:
    policy = policy_of(f'[orgs.acme]\nkeys = ["{FP_A}"]\n')
    verdict = judge(policy, Signers(), repo_id="other/relu", variant="v")
    assert verdict.signer is None and "unsigned" in verdict.note
    assert judge(EMPTY, Signers(), repo_id="other/relu", variant="v").signer is None
    with pytest.raises(SignatureError, match=r"trust policy accepts for 'other'.*none"):
        judge(policy, Signers(valid=(Signer(FP_A),)), repo_id="other/relu", variant="v",
              require=True)
    strict = policy_of(f'require-signature = true\n[orgs.acme]\nkeys = ["{FP_A}"]\n')
    with pytest.raises(SignatureError):
        judge(strict, Signers(), repo_id="other/relu", variant="v")


def test_a_locked_signer_must_have_signed_whatever_the_policy() -> None:
    signers = Signers(valid=(Signer(FP_A),))
    assert judge(EMPTY, signers, repo_id="x/y", variant="v", locked_signer=FP_A).signer == FP_A
    with pytest.raises(SignatureError) as err:
        judge(EMPTY, signers, repo_id="x/y", variant="v", locked_signer=FP_B)
    assert err.value.expected == (FP_B,)
    revoking = policy_of(f'revoked = ["{FP_A}"]')
    with pytest.raises(SignatureError, match="revoked"):
        judge(revoking, signers, repo_id="x/y", variant="v", locked_signer=FP_A)


def test_sigstore_identities_match_issuer_repository_and_workflow() -> None:
    policy = policy_of("[[orgs.acme.sigstore]]\nrepository = 'acme/kernels'\n"
                       f"workflows = ['{WORKFLOW}']\n")

    def signer(**claims: str) -> Signers:
        base = {"issuer": "https://token.actions.githubusercontent.com",
                "source-repository": "https://github.com/acme/kernels",
                "build-signer": WORKFLOW, **claims}
        return Signers(valid=(Signer(f"sigstore:{base['build-signer']}",
                                     tuple(sorted(base.items()))),))

    assert judge(policy, signer(), repo_id="acme/x", variant="v").signer == f"sigstore:{WORKFLOW}"
    for wrong in ({"issuer": "https://accounts.google.com"},
                  {"source-repository": "https://github.com/evil/kernels"},
                  {"build-signer": WORKFLOW.replace("main", "dev")}):
        with pytest.raises(SignatureError) as err:
            judge(policy, signer(**wrong), repo_id="acme/x", variant="v")
        assert err.value.expected == (f"sigstore:{WORKFLOW}",)
