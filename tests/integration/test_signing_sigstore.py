"""Upstream's sigstore bundles (``metadata.json.sigstore``), verified offline.

The public Sigstore services (Fulcio, Rekor, the TUF trust root) cannot be reached here, so the
bundles come from ``tests/sigstore_local.py``: a certificate authority, a certificate
transparency log and a transparency log of the tests' own, every signature real, checked by
``sigstore``'s own ``Verifier`` given that trust root (``KERNELKIT_SIGSTORE_TRUSTED_ROOT``).
What stays untested: a bundle from the public instance (a real GitHub workflow run) verified
against the trust root the ``sigstore`` package ships.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

import pytest

pytest.importorskip("sigstore")
pytest.importorskip("rfc8785")
torch = pytest.importorskip("torch")

from kernelkit.errors import SignatureError  # noqa: E402
from kernelkit.hub.local import LocalGitHub  # noqa: E402
from kernelkit.loader import api  # noqa: E402
from kernelkit.publish.upload import upload  # noqa: E402
from kernelkit.signing.sigstore_bundle import verify_bundle  # noqa: E402
from kernelkit.signing.verify import collect  # noqa: E402
from kernelkit.variants.host import detect_system  # noqa: E402
from tests.helpers import make_variant, write_trust_policy  # noqa: E402
from tests.sigstore_local import WORKFLOW, LocalSigstore  # noqa: E402

HOST = detect_system().arch_variant() or "torch-cpu"


@pytest.fixture(scope="module")
def sigstore() -> LocalSigstore:
    return LocalSigstore()


@pytest.fixture
def trusted_root(sigstore: LocalSigstore, tmp_path: Path,
                 monkeypatch: pytest.MonkeyPatch) -> Path:
    path = sigstore.write_trusted_root(tmp_path / "trusted_root.json")
    monkeypatch.setenv("KERNELKIT_SIGSTORE_TRUSTED_ROOT", str(path))
    return path


def signed_variant(tmp: Path, sigstore: LocalSigstore, **claims: str) -> Path:
    """A sealed variant carrying a bundle over its metadata.json, as upstream's CI signs."""
    vdir = make_variant(tmp / f"p-{uuid.uuid4().hex[:6]}" / "build", HOST,
                        uid=uuid.uuid4().hex[:7])
    (vdir / "metadata.json.sigstore").write_bytes(
        sigstore.sign((vdir / "metadata.json").read_bytes(), **claims))
    return vdir


def test_a_bundle_verifies_over_exactly_metadata_json(sigstore: LocalSigstore,
                                                      trusted_root: Path, tmp_path: Path) -> None:
    vdir = signed_variant(tmp_path, sigstore)
    meta = (vdir / "metadata.json").read_bytes()
    bundle = (vdir / "metadata.json.sigstore").read_bytes()
    signer = verify_bundle(meta, bundle, trusted_root=trusted_root)
    assert signer.identity == f"sigstore:{WORKFLOW}"
    assert signer.claim("source-repository") == "https://github.com/acme/kernels"
    changed = collect(meta.replace(b"Apache", b"apache"), sigfile_raw=None, bundle_raw=bundle,
                      trusted_root=trusted_root)
    assert not changed.valid and changed.invalid == (f"sigstore:{WORKFLOW}",)
    # the same bundle against the trust root the sigstore package ships: not that CA's
    public = collect(meta, sigfile_raw=None, bundle_raw=bundle)
    assert not public.valid and "does not verify" in public.problems[0]


@pytest.mark.parametrize("raw", [b"", b"{}", b"[]", b"null", b'{"mediaType": 1}',
                                 b"\xff\xfe" * 10, b"{" * 5000])
def test_unreadable_bundles_are_problems_not_crashes(raw: bytes, trusted_root: Path) -> None:
    signers = collect(b"{}", sigfile_raw=None, bundle_raw=raw, trusted_root=trusted_root)
    assert not signers.valid and signers.problems[0].startswith("unreadable sigstore bundle")


def test_get_kernel_applies_the_workflow_policy(
        sigstore: LocalSigstore, trusted_root: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    hub = LocalGitHub(Path(os.environ["KERNELKIT_HUB_DIR"]))
    good = signed_variant(tmp_path, sigstore)
    other = signed_variant(tmp_path, sigstore, repository="evil/kernels",
                           workflow="https://github.com/evil/kernels/.github/workflows/b.yaml"
                                    "@refs/heads/main")
    upload(good.parent, hub, repo_id="acme/good")
    upload(other.parent, hub, repo_id="acme/other")
    policy = write_trust_policy(tmp_path / "trust.toml",
                                sigstore={"acme": ("acme/kernels", [WORKFLOW])})
    monkeypatch.setenv("KERNELKIT_TRUST_POLICY", str(policy))
    kernel = api.get_kernel("acme/good", version=1, trust_remote_code=True)
    assert torch.equal(kernel.scale(torch.ones(2)), torch.full((2,), 2.0))
    with pytest.raises(SignatureError) as err:
        api.get_kernel("acme/other", version=1, trust_remote_code=True)
    assert err.value.expected == (f"sigstore:{WORKFLOW}",)
    assert "evil/kernels" in err.value.found


def test_upstream_and_kernelkit_agree_on_the_same_bundles(
        sigstore: LocalSigstore, trusted_root: Path, tmp_path: Path) -> None:
    """Upstream 0.19.1's own ``verify_signature`` (its ``GitHubWorkflowPolicy``) on kernelkit
    variants carrying bundles: the one stand-in is its trust root, ``Verifier.production()``
    replaced by a ``Verifier`` over the local instance's (the public one is unreachable)."""
    from tests.upstream_run import run_upstream

    good = signed_variant(tmp_path, sigstore)
    wrong = signed_variant(tmp_path, sigstore, repository="evil/kernels",
                           workflow="https://github.com/evil/kernels/.github/workflows/b.yaml"
                                    "@refs/heads/main")
    tampered = signed_variant(tmp_path, sigstore)
    meta = json.loads((tampered / "metadata.json").read_text())
    meta["license"] = "MIT"
    (tampered / "metadata.json").write_text(json.dumps(meta))
    theirs = run_upstream("""
        import json, sys
        from pathlib import Path
        from sigstore.models import TrustedRoot
        from sigstore.verify import Verifier
        def local_root(cls, offline=False):
            return cls(trusted_root=TrustedRoot.from_file(sys.argv[1]))
        Verifier.production = classmethod(local_root)
        from kernels._internals.verify import GitHubWorkflowPolicy, verify_signature
        from kernels._rust import KernelLocation, Oid
        policy = GitHubWorkflowPolicy(repo_id="acme/kernels", signer_uris=[sys.argv[2]])
        out = {}
        where = KernelLocation.remote("acme/x", Oid.from_str("0" * 40), "v")
        for path in sys.argv[3:]:
            result = verify_signature(Path(path), policy=policy, cache=False, location=where)
            out[path] = type(result).__name__
        print(json.dumps(out))
    """, str(trusted_root), WORKFLOW, str(good), str(wrong), str(tampered))
    assert theirs == {str(good): "Success", str(wrong): "SignatureVerificationFailure",
                      str(tampered): "SignatureVerificationFailure"}
    from kernelkit.signing.policy import judge, parse_policy

    policy = parse_policy({"orgs": {"acme": {"sigstore": [
        {"repository": "acme/kernels", "workflows": [WORKFLOW]}]}}}, "policy")
    ours = {}
    for vdir in (good, wrong, tampered):
        signers = collect((vdir / "metadata.json").read_bytes(), sigfile_raw=None,
                          bundle_raw=(vdir / "metadata.json.sigstore").read_bytes(),
                          trusted_root=trusted_root)
        try:
            judge(policy, signers, repo_id="acme/x", variant="v")
            ours[str(vdir)] = "Success"
        except SignatureError:
            ours[str(vdir)] = "SignatureVerificationFailure"
    assert ours == theirs
