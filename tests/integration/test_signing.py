"""Signed kernels end to end: real Ed25519 keys, real `kernelkit upload` to a real local git hub,
real loads (synthetic variants that register torch ops; one compiled build), the trust policy
applied before anything of a variant is imported (docs/security.md, "Signatures")."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

pytest.importorskip("cryptography")
torch = pytest.importorskip("torch")

from kernelkit.artifact.layout import seal_variant  # noqa: E402
from kernelkit.artifact.metadata import Metadata  # noqa: E402
from kernelkit.errors import IntegrityError, SignatureError  # noqa: E402
from kernelkit.hub.local import LocalGitHub  # noqa: E402
from kernelkit.loader import api  # noqa: E402
from kernelkit.publish.upload import upload  # noqa: E402
from kernelkit.signing.keys import SigningKey, generate_key  # noqa: E402
from kernelkit.variants.host import detect_system  # noqa: E402
from tests.helpers import (  # noqa: E402
    make_variant,
    publish_build,
    run_cli,
    write_trust_policy,
)

HOST = detect_system().arch_variant() or "torch-cpu"


def new_key(tmp: Path, name: str = "key") -> SigningKey:
    return generate_key(tmp / "keys" / f"{name}-{uuid.uuid4().hex[:6]}.pem")


class Published:
    """One signed (or unsigned) build of ``repo`` uploaded with `kernelkit upload`."""

    def __init__(self, tmp: Path, hub: LocalGitHub, repo: str, key: SigningKey | None,
                 *, tag: str = "v1", factor: float = 2.0) -> None:
        self.marker = tmp / f"imported-{uuid.uuid4().hex[:8]}"
        self.build = tmp / f"proj-{uuid.uuid4().hex[:8]}" / "build"
        uid = uuid.uuid4().hex[:7]
        self.variant = make_variant(
            self.build, HOST, uid=uid, tag=tag, factor=factor,
            init_extra=f"\nimport pathlib\npathlib.Path({str(self.marker)!r}).touch()\n")
        self.result = upload(self.build, hub, repo_id=repo, sign_key=key)
        self.commit = self.result.commit


@pytest.fixture
def hub(isolated_settings: Path) -> LocalGitHub:
    """The hub ``get_kernel`` reads here (``KERNELKIT_HUB_DIR`` of the isolated settings), not
    the empty one tests/integration/conftest.py gives."""
    return LocalGitHub(Path(os.environ["KERNELKIT_HUB_DIR"]))


def repo_name(org: str = "acme") -> str:
    return f"{org}/k{uuid.uuid4().hex[:8]}"


def policy(tmp: Path, monkeypatch: pytest.MonkeyPatch, **kwargs: object) -> Path:
    path = write_trust_policy(tmp / f"trust-{uuid.uuid4().hex[:6]}.toml", **kwargs)  # type: ignore[arg-type]
    monkeypatch.setenv("KERNELKIT_TRUST_POLICY", str(path))
    return path


def load(repo: str, **kwargs: object) -> object:
    """The public ``kernelkit.get_kernel`` (the one users call: build_missing's wrapper of the
    loader's), so every policy test also holds that it passes ``require_signature`` on."""
    import kernelkit

    return kernelkit.get_kernel(repo, version=1, trust_remote_code=True, **kwargs)  # type: ignore[arg-type]


def test_sign_upload_load_verified(tmp_path: Path, hub: LocalGitHub,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    key = new_key(tmp_path)
    repo = repo_name()
    pub = Published(tmp_path, hub, repo, key)
    assert hub.read_file(repo, pub.commit, f"build/{HOST}.kksig") is not None
    policy(tmp_path, monkeypatch, orgs={"acme": [key.fingerprint]})
    kernel = load(repo)
    assert pub.marker.exists()
    assert torch.equal(kernel.scale(torch.ones(3)), torch.full((3,), 2.0))  # type: ignore[attr-defined]
    # the download recorded the hub's signature file beside the variant, and the check
    cached = next(Path(os.environ["KERNELKIT_CACHE"]).glob(f"*/{pub.commit}/build"))
    assert (cached / f".{HOST}.kksig").read_bytes() == (pub.build / f"{HOST}.kksig").read_bytes()
    assert json.loads((cached / f".{HOST}.sigcheck").read_text())["signers"]["valid"] == [
        {"identity": key.fingerprint, "claims": {}}]


def _republish_tampered(hub: LocalGitHub, repo: str, pub: Published, change: str) -> None:
    """What a hub (or someone who can push) does to a signed variant: change a file or a byte of
    metadata.json, reseal the digest so it is consistent again, keep the old signature file."""
    vdir = pub.variant
    meta = Metadata.read(vdir / "metadata.json")
    if change == "metadata":
        import dataclasses

        meta = dataclasses.replace(meta, license="MIT")  # one field, digest resealed below
    else:
        (vdir / "_ops.py").write_text((vdir / "_ops.py").read_text() + "\n# changed\n")
    import dataclasses

    seal_variant(vdir, dataclasses.replace(meta, digest=None))
    publish_build(hub, repo, "v1", pub.build)


@pytest.mark.parametrize("change", ["metadata", "file"])
def test_a_changed_byte_under_a_resealed_digest_is_refused_before_import(
        tmp_path: Path, hub: LocalGitHub, monkeypatch: pytest.MonkeyPatch, change: str) -> None:
    key = new_key(tmp_path)
    repo = repo_name()
    pub = Published(tmp_path, hub, repo, key)
    _republish_tampered(hub, repo, pub, change)
    policy(tmp_path, monkeypatch, orgs={"acme": [key.fingerprint]})
    with pytest.raises(SignatureError) as err:
        load(repo)
    assert "does not match metadata.json" in err.value.message and HOST in err.value.message
    assert err.value.expected == (key.fingerprint,)
    assert not pub.marker.exists()


def test_a_changed_file_without_reseal_is_an_integrity_error(
        tmp_path: Path, hub: LocalGitHub, monkeypatch: pytest.MonkeyPatch) -> None:
    key = new_key(tmp_path)
    repo = repo_name()
    pub = Published(tmp_path, hub, repo, key)
    (pub.variant / "_ops.py").write_text("raise SystemExit('planted')\n")
    publish_build(hub, repo, "v1", pub.build)
    policy(tmp_path, monkeypatch, orgs={"acme": [key.fingerprint]})
    with pytest.raises(IntegrityError):
        load(repo)
    assert not pub.marker.exists()


def test_wrong_signer_revoked_key_and_unsigned_are_refused_with_one_line(
        tmp_path: Path, hub: LocalGitHub, monkeypatch: pytest.MonkeyPatch) -> None:
    trusted, stranger = new_key(tmp_path, "trusted"), new_key(tmp_path, "stranger")
    by_stranger, unsigned = repo_name(), repo_name()
    Published(tmp_path, hub, by_stranger, stranger)
    Published(tmp_path, hub, unsigned, None)
    by_trusted = repo_name()
    trusted_pub = Published(tmp_path, hub, by_trusted, trusted)
    policy(tmp_path, monkeypatch, orgs={"acme": [trusted.fingerprint]})
    for repo, found in ((by_stranger, stranger.fingerprint), (unsigned, "unsigned")):
        with pytest.raises(SignatureError) as err:
            load(repo)
        first = str(err.value).splitlines()[0]
        assert first == err.value.message and HOST in first and repo in first
        assert trusted.fingerprint in first and err.value.found == found
    policy(tmp_path, monkeypatch, orgs={"acme": [trusted.fingerprint]},
           revoked=[trusted.fingerprint])
    with pytest.raises(SignatureError, match="revoked"):
        load(by_trusted)
    assert not trusted_pub.marker.exists()
    proc = run_cli("verify-signature", by_stranger, "1")
    assert proc.returncode == 1 and stranger.fingerprint in proc.stdout


def test_rotation_keeps_old_signatures_valid_until_revoked(
        tmp_path: Path, hub: LocalGitHub, monkeypatch: pytest.MonkeyPatch) -> None:
    old, new = new_key(tmp_path, "old"), new_key(tmp_path, "new")
    before, after = repo_name(), repo_name()
    Published(tmp_path, hub, before, old)
    pub = Published(tmp_path, hub, after, old)
    upload(pub.build, hub, repo_id=after, sign_key=new)  # the new key signs beside the old
    signers = json.loads((pub.build / f"{HOST}.kksig").read_text())["signatures"]
    assert len(signers) == 2
    policy(tmp_path, monkeypatch, orgs={"acme": [old.fingerprint, new.fingerprint]})
    load(before)
    load(after)
    policy(tmp_path, monkeypatch, orgs={"acme": [old.fingerprint, new.fingerprint]},
           revoked=[old.fingerprint])
    with pytest.raises(SignatureError, match="revoked"):
        load(before)  # only the old key signed it
    load(after)  # the new key's signature stands


def test_require_signature_without_a_policy_entry_and_the_environment_switch(
        tmp_path: Path, hub: LocalGitHub, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    key = new_key(tmp_path)
    repo = repo_name("other")
    pub = Published(tmp_path, hub, repo, key)
    with caplog.at_level(logging.INFO, logger="kernelkit.signing"):
        load(repo)  # no policy: loads as before, one line says it carries a signature
    notes = [r.getMessage() for r in caplog.records if r.name == "kernelkit.signing"]
    assert len(notes) == 1 and "carries a signature" in notes[0]
    unsigned = repo_name("other")
    Published(tmp_path, hub, unsigned, None)
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="kernelkit.signing"):
        load(unsigned)
    assert [r.getMessage() for r in caplog.records][-1].endswith(
        "is unsigned (no trust policy applies; docs/security.md)")
    second = Published(tmp_path, hub, repo_name("other"), key)
    with pytest.raises(SignatureError, match="no identity is trusted"):
        load(second.result.repo_id, require_signature=True)
    monkeypatch.setenv("KERNELKIT_REQUIRE_SIGNED", "1")
    third = Published(tmp_path, hub, repo_name("other"), key)
    with pytest.raises(SignatureError):
        load(third.result.repo_id)
    assert not second.marker.exists() and not third.marker.exists() and pub.marker.exists()


def test_verification_is_offline_and_a_revocation_applies_at_once(
        tmp_path: Path, hub: LocalGitHub, monkeypatch: pytest.MonkeyPatch) -> None:
    key = new_key(tmp_path)
    repo = repo_name()
    Published(tmp_path, hub, repo, key)
    policy(tmp_path, monkeypatch, orgs={"acme": [key.fingerprint]})
    api.install_kernel(repo, version=1)  # online: downloads the variant and its signature file
    monkeypatch.setenv("KERNELKIT_OFFLINE", "1")
    hub_dir = Path(os.environ["KERNELKIT_HUB_DIR"])
    hub_dir.rename(hub_dir.with_name("hub-gone"))  # nothing to ask even if it tried
    load(repo)
    policy(tmp_path, monkeypatch, orgs={"acme": [key.fingerprint]}, revoked=[key.fingerprint])
    with pytest.raises(SignatureError, match="revoked"):
        load(repo)


def test_a_warm_load_reuses_the_remembered_check_without_cryptography(
        tmp_path: Path, hub: LocalGitHub, monkeypatch: pytest.MonkeyPatch) -> None:
    key = new_key(tmp_path)
    repo = repo_name()
    Published(tmp_path, hub, repo, key)
    policy(tmp_path, monkeypatch, orgs={"acme": [key.fingerprint]})
    code = (f"import sys, kernelkit\nkernelkit.get_kernel({repo!r}, version=1, "
            "trust_remote_code=True)\nprint('cryptography' in sys.modules)")

    def fresh() -> str:
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              env=os.environ.copy(), timeout=120)
        assert proc.returncode == 0, proc.stderr[-2000:]
        return proc.stdout.strip().splitlines()[-1]

    assert fresh() == "True"  # the first load verified the signature
    assert fresh() == "False"  # the second reused what it found, the policy judged again
    without = {k: v for k, v in os.environ.items() if k != "KERNELKIT_TRUST_POLICY"}
    proc = subprocess.run([sys.executable, "-c", code.replace(
        "'cryptography' in sys.modules", "[m for m in sys.modules if 'signing' in m]")],
        capture_output=True, text=True, env=without, timeout=120)
    assert proc.stdout.strip().splitlines()[-1] == "[]"  # no policy: nothing of it imported
    cached = next(Path(os.environ["KERNELKIT_CACHE"]).glob(f"*/*/build/.{HOST}.kksig"))
    other = new_key(tmp_path, "other")
    from kernelkit.signing.sign import sign_variant

    forged = sign_variant(Published(tmp_path, hub, repo_name(), other).variant, other)
    os.chmod(cached, 0o644)
    cached.write_bytes(forged.path.read_bytes())  # a different signature file: checked again
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=os.environ.copy(), timeout=120)
    assert proc.returncode != 0 and "SignatureError" in proc.stderr


def test_lock_records_the_signer_and_locked_loads_verify_it_offline(
        tmp_path: Path, hub: LocalGitHub, monkeypatch: pytest.MonkeyPatch) -> None:
    import kernelkit

    key, other = new_key(tmp_path), new_key(tmp_path, "other")
    repo = repo_name("other")  # no policy for this organisation: the lock alone pins the signer
    pub = Published(tmp_path, hub, repo, key)
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        f'[project]\nname = "p"\nversion = "0"\n[tool.kernels.dependencies]\n"{repo}" = 1\n')
    assert run_cli("lock", str(project)).returncode == 0
    sidecar = json.loads((project / "kernels.lock.hashes").read_text())
    assert sidecar["kernels"][repo]["variants"][HOST]["signer"] == key.fingerprint
    assert "signer" not in (project / "kernels.lock").read_text()  # upstream's file unchanged
    assert run_cli("download", str(project)).returncode == 0
    monkeypatch.setenv("KERNELKIT_OFFLINE", "1")
    kernelkit.load_kernel(repo, lockfile=project / "kernels.lock")
    assert pub.marker.exists()
    sidecar["kernels"][repo]["variants"][HOST]["signer"] = other.fingerprint
    (project / "kernels.lock.hashes").write_text(json.dumps(sidecar))
    with pytest.raises(SignatureError) as err:
        kernelkit.load_kernel(repo, lockfile=project / "kernels.lock")
    assert err.value.expected == (other.fingerprint,) and HOST in err.value.message
    monkeypatch.delenv("KERNELKIT_OFFLINE")  # get_locked_kernel holds the pin online too
    with pytest.raises(SignatureError) as err:
        kernelkit.get_locked_kernel(repo, lockfile=project / "kernels.lock")
    assert err.value.expected == (other.fingerprint,) and HOST in err.value.message


def test_upload_refuses_a_stale_signature_and_the_cli_signs(
        tmp_path: Path, hub: LocalGitHub, monkeypatch: pytest.MonkeyPatch) -> None:
    key_file = tmp_path / "k.pem"
    out = run_cli("keygen", "-o", str(key_file))
    assert out.returncode == 0 and "ed25519:SHA256:" in out.stdout
    build = tmp_path / "proj" / "build"
    vdir = make_variant(build, HOST, uid=uuid.uuid4().hex[:7])
    assert run_cli("sign", str(build), "--key", str(key_file)).returncode == 0
    seal_variant(vdir, Metadata(name="demo", id=Metadata.read(vdir / "metadata.json").id,
                                version=1, license="MIT", backend="cpu"))  # rebuilt since
    repo = repo_name()
    proc = run_cli("upload", str(build), "--repo-id", repo)
    assert proc.returncode == 1 and "signs another build" in proc.stderr
    assert not hub.repo_exists(repo)  # nothing was published
    monkeypatch.setenv("KERNELKIT_SIGNING_KEY", key_file.read_text())  # a CI secret
    assert run_cli("upload", str(build), "--repo-id", repo, "--sign").returncode == 0
    proc = run_cli("verify-signature", repo, "1", "--json")
    result = json.loads(proc.stdout)
    assert proc.returncode == 0 and result["variants"][0]["ok"] is True


def test_verify_signature_all_variants(tmp_path: Path, hub: LocalGitHub,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    key = new_key(tmp_path)
    build = tmp_path / "p" / "build"
    uid = uuid.uuid4().hex[:7]
    make_variant(build, HOST, uid=uid)
    other = ("torch213-cxx11-cu130-x86_64-linux" if "cpu" in HOST
             else "torch213-cxx11-cpu-x86_64-linux")
    make_variant(build, other, uid=uid)
    repo = repo_name()
    upload(build, hub, repo_id=repo, sign_key=key)
    policy(tmp_path, monkeypatch, orgs={"acme": [key.fingerprint]})
    proc = run_cli("verify-signature", repo, "1", "--all-variants")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("ok ") == 2
    by_branch = run_cli("verify-signature", repo, "--revision", "v1", "--json")
    assert by_branch.returncode == 0 and len(json.loads(by_branch.stdout)["variants"]) == 1
    newest = run_cli("verify-signature", repo, "--json")  # neither: the newest major, as info
    assert newest.returncode == 0 and json.loads(newest.stdout)["commit"] == json.loads(
        by_branch.stdout)["commit"]
    assert run_cli("verify-signature", repo, "1", "--revision", "v1").returncode == 2  # both
    unsigned = repo_name()
    Published(tmp_path, hub, unsigned, None)
    assert run_cli("verify-signature", unsigned, "1").returncode == 1
    skipped = run_cli("verify-signature", unsigned, "1", "--filter-unsigned")
    assert skipped.returncode == 0 and skipped.stdout == ""


@pytest.mark.slow
def test_a_compiled_build_signed_uploaded_and_loaded(
        img2gray_cpu_build: Path, tmp_path: Path, hub: LocalGitHub,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The real img2gray compile: signed, uploaded, loaded verified in a fresh process; its
    extension replaced by another file under a resealed digest is refused before import."""
    import shutil

    key = new_key(tmp_path)
    build = tmp_path / "img2gray" / "build"
    shutil.copytree(img2gray_cpu_build, build / img2gray_cpu_build.name)
    repo = repo_name()
    upload(build, hub, repo_id=repo, sign_key=key)
    policy(tmp_path, monkeypatch, orgs={"acme": [key.fingerprint]})
    code = (f"import kernelkit, torch\nk = kernelkit.get_kernel({repo!r}, version=1, "
            "trust_remote_code=True)\nprint(k.img2gray(torch.zeros(2, 2, 3, dtype=torch.uint8))"
            ".tolist())")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=os.environ.copy(), timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().splitlines()[-1] == "[[0, 0], [0, 0]]"
    vdir = build / img2gray_cpu_build.name
    so = next(vdir.glob("*.so"))
    so.write_bytes(so.read_bytes() + b"\0")  # one byte more in the native library
    meta = Metadata.read(vdir / "metadata.json")
    import dataclasses

    seal_variant(vdir, dataclasses.replace(meta, digest=None))
    publish_build(hub, repo, "v1", build)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=os.environ.copy(), timeout=300)
    assert proc.returncode != 0 and "does not match metadata.json" in proc.stderr
