"""Signed builds both ways: upstream's loaders (0.17.2, 0.19.1) load a kernelkit build carrying
kernelkit's signature file (``build/<variant>.kksig``, beside the variant: inside it, upstream's
digest check refuses it as an unknown file) and a sigstore bundle (``metadata.json.sigstore``,
which both digests leave out), served by ``kernelkit serve`` and from a local directory; and
kernelkit loads the same build with a trust policy that requires the signature."""

from __future__ import annotations

import shutil
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conformance.support import CHECK_IMG2GRAY, REPO_ID, kernelkit_run
from tests.helpers import write_trust_policy
from tests.hubserver import HubServer, run_server
from tests.upstream_envs import UpstreamEnv

pytestmark = pytest.mark.slow  # the session's compiled img2gray build
pytest.importorskip("cryptography")


@pytest.fixture(scope="module")
def signed_build(img2gray_cpu_build: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the session build, signed with a fresh key (and carrying a sigstore bundle
    when the sigstore test dependencies are there); returns its ``build/``."""
    from kernelkit.signing.keys import generate_key
    from kernelkit.signing.sign import sign_tree

    root = tmp_path_factory.mktemp("signed")
    build = root / "build"
    vdir = build / img2gray_cpu_build.name
    shutil.copytree(img2gray_cpu_build, vdir, ignore=shutil.ignore_patterns("__pycache__"))
    key = generate_key(root / "key.pem")
    sign_tree(build, key)
    (root / "fingerprint").write_text(key.fingerprint)
    try:
        from tests.sigstore_local import LocalSigstore
    except ImportError:  # pragma: no cover - sigstore is in the dev extra
        return build
    (vdir / "metadata.json.sigstore").write_bytes(
        LocalSigstore().sign((vdir / "metadata.json").read_bytes()))
    return build


@pytest.fixture(scope="module")
def signed_served(signed_build: Path, tmp_path_factory: pytest.TempPathFactory
                  ) -> Iterator[HubServer]:
    from kernelkit.hub.local import LocalGitHub
    from kernelkit.publish.upload import upload

    root = tmp_path_factory.mktemp("signed-hub")
    upload(signed_build, LocalGitHub(root / "hub"), repo_id=REPO_ID)
    with run_server(root / "hub", root, "--trusted-publisher", "kernelkit-examples") as server:
        yield server


def test_their_loaders_load_a_signed_build(upstream: UpstreamEnv, signed_build: Path,
                                           signed_served: HubServer, tmp_path: Path) -> None:
    """Row "signatures: a signed kernelkit build": the signature file beside the variant is
    not listed as a variant, not downloaded, and breaks no digest check."""
    [vdir] = [p for p in signed_build.iterdir() if p.is_dir()]
    assert (signed_build / f"{vdir.name}.kksig").is_file()
    local = upstream.run(CHECK_IMG2GRAY + textwrap.dedent(f"""
        from pathlib import Path
        import kernels
        check(kernels.get_local_kernel(Path({str(signed_build.parent)!r})))
    """))
    assert "CONFORMANCE-OK" in local.stdout, local.stderr[-2000:]
    env = signed_served.env(None, HF_HOME=str(tmp_path / "hf-home"),
                            KERNELS_CACHE=str(tmp_path / "kernels-cache"))
    hub = upstream.run(CHECK_IMG2GRAY + textwrap.dedent(f"""
        import kernels
        check(kernels.get_kernel({REPO_ID!r}, version=1))
    """), env=env)
    assert "CONFORMANCE-OK" in hub.stdout, hub.stderr[-2000:]


def test_kernelkit_requires_the_signature_through_serve(signed_build: Path,
                                                        signed_served: HubServer,
                                                        tmp_path: Path) -> None:
    fingerprint = (signed_build.parent / "fingerprint").read_text()
    org = REPO_ID.split("/")[0]
    policy = write_trust_policy(tmp_path / "trust.toml", orgs={org: [fingerprint]})
    env = signed_served.env(None, KERNELKIT_CACHE=str(tmp_path / "kk"), KERNELKIT_HUB="hf",
                            KERNELKIT_TRUST_POLICY=str(policy), XDG_CONFIG_HOME=str(tmp_path))
    code = CHECK_IMG2GRAY + textwrap.dedent(f"""
        import kernelkit
        check(kernelkit.get_kernel({REPO_ID!r}, version=1, trust_remote_code=True))
    """)
    ok = kernelkit_run(code, env=env)
    assert "CONFORMANCE-OK" in ok.stdout, ok.stderr[-2000:]
    wrong = write_trust_policy(tmp_path / "wrong.toml",
                               orgs={org: ["ed25519:SHA256:" + "A" * 43]})
    refused = kernelkit_run(code, env={**env, "KERNELKIT_TRUST_POLICY": str(wrong),
                                       "KERNELKIT_CACHE": str(tmp_path / "kk2")})
    assert refused.returncode != 0 and "SignatureError" in refused.stderr


def test_why_the_signature_file_is_not_inside_the_variant(kernels_019: UpstreamEnv,
                                                          signed_build: Path,
                                                          tmp_path: Path) -> None:
    """Upstream 0.19.1 refuses a variant holding a file its digest does not list (other than
    metadata.json and metadata.json.sigstore): a signature file inside would break it."""
    [vdir] = [p for p in signed_build.iterdir() if p.is_dir()]
    inside = tmp_path / "build" / vdir.name
    shutil.copytree(vdir, inside)
    shutil.copy(signed_build / f"{vdir.name}.kksig", inside / "metadata.json.kksig")
    proc = kernels_019.run(CHECK_IMG2GRAY + textwrap.dedent(f"""
        from pathlib import Path
        import kernels
        check(kernels.get_local_kernel(Path({str(tmp_path)!r})))
    """))
    assert proc.returncode != 0 and "Unknown file: metadata.json.kksig" in proc.stderr
