"""Regression tests for issue 11 (hardening): every reproduction now fails closed with a
kernelkit error, or can no longer happen. Real local git hubs, real subprocesses, synthetic
(pure-Python) variants: no compile."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from kernelkit.artifact.layout import seal_variant  # noqa: E402
from kernelkit.artifact.metadata import Metadata, MetadataError  # noqa: E402
from kernelkit.errors import (  # noqa: E402
    ExitCode,
    HubError,
    IntegrityError,
    KernelIdConflictError,
    KernelkitError,
    LockError,
    OfflineError,
    VersionRequestError,
)
from kernelkit.hub.local import LocalGitHub  # noqa: E402
from kernelkit.loader import api  # noqa: E402
from kernelkit.loader.cache import RepoCache  # noqa: E402
from kernelkit.variants.host import detect_system  # noqa: E402
from tests.helpers import make_variant, publish_build  # noqa: E402

HOST = detect_system().arch_variant() or "torch-cpu"
ROOT = Path(__file__).resolve().parents[2]


def uid() -> str:
    return uuid.uuid4().hex[:7]


def publish(hub: LocalGitHub, tmp: Path, repo_id: str, branch: str, **kwargs: Any) -> str:
    build = tmp / f"build-{uuid.uuid4().hex[:8]}"
    make_variant(build, HOST, **{"uid": uid(), **kwargs})
    return publish_build(hub, repo_id, branch, build)


def cli(*args: str, env: dict[str, str] | None = None,
        cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "PYTHONPATH": str(ROOT / "src"), **(env or {})}
    return subprocess.run([sys.executable, "-m", "kernelkit", *args], capture_output=True,
                          text=True, env=full, cwd=cwd, timeout=120)


def one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    """The CLI failed with kernelkit's own error (an exit code of the table), not a traceback."""
    assert proc.returncode in {int(c) for c in ExitCode} - {0, 130}, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.startswith("error: "), proc.stderr
    return proc.stderr


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    for var in ("LOCAL_KERNELS", "KERNELKIT_OFFLINE", "HF_HUB_OFFLINE", "KERNELKIT_HUB",
                "KERNELKIT_TRUSTED_PUBLISHERS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("KERNELKIT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("KERNELKIT_HUB", str(tmp_path / "hub"))  # offline loads key by this hub
    return {"hub": LocalGitHub(tmp_path / "hub"), "cache": tmp_path / "cache", "tmp": tmp_path}


# --- 1. cache identity ---------------------------------------------------------------------


def test_cache_folders_are_injective(tmp_path: Path) -> None:
    ids = ["acme/fast--gelu", "acme--fast/gelu", "acme/fast-gelu", "Acme/fast--gelu"]
    roots = {RepoCache.of(tmp_path, r, "local:/hub").root for r in ids}
    assert len(roots) == len(ids)
    rc = RepoCache.of(tmp_path, "acme/x", "local:/hub")
    refs = ("v1", "v1/x", "v1%2Fx", ".", "..", ".hidden", "a" * 200, "a" * 199 + "b")
    names = {rc.ref_path("resolved", r).name for r in refs}
    assert len(names) == len(refs) and not any(n.startswith(".") for n in names)
    assert max(len(n.encode()) for n in names) <= 160  # bounded: a long tag is a valid name


def test_colliding_names_never_run_each_others_code(env: dict[str, Any],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    hub, tmp = env["hub"], env["tmp"]
    publish(hub, tmp, "acme/fast--gelu", "v1", factor=2.0)
    publish(hub, tmp, "acme--fast/gelu", "v1", factor=7.0)
    a = api.get_kernel("acme/fast--gelu", version=1, trust_remote_code=True, hub=hub)
    b = api.get_kernel("acme--fast/gelu", version=1, trust_remote_code=True, hub=hub)
    x = torch.ones(2)
    assert torch.equal(a.scale(x), x * 2) and torch.equal(b.scale(x), x * 7)
    monkeypatch.setenv("KERNELKIT_OFFLINE", "1")
    monkeypatch.setenv("KERNELKIT_TRUSTED_PUBLISHERS", "acme")
    again = api.get_kernel("acme/fast--gelu", version=1)
    assert again is a and torch.equal(again.scale(x), x * 2)


def test_hub_identities_need_no_network_and_agree_with_the_settings(tmp_path: Path) -> None:
    from kernelkit.hub import identity_of, open_hub
    from kernelkit.hub.git_remote import GitRemoteHub
    from kernelkit.hub.hf import HuggingFaceHub

    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    local = LocalGitHub(tmp_path / "link").hub_identity
    assert local == "local:" + str((tmp_path / "real").resolve())
    assert identity_of(None, {"KERNELKIT_HUB_DIR": str(tmp_path / "real")}) == local
    assert identity_of(str(tmp_path / "real") + "/", {}) == local
    assert open_hub(None, env={"KERNELKIT_HUB": str(tmp_path / "link")}).hub_identity == local
    git = GitRemoteHub("git+file:///srv/kernels/", tmp_path / "c").hub_identity
    assert git == "git:file:///srv/kernels" == identity_of("git+file:///srv/kernels", {})
    served = {"HF_ENDPOINT": "http://127.0.0.1:8080/"}  # e.g. `kernelkit serve`
    assert identity_of("hf", served) == "hf:http://127.0.0.1:8080"
    assert open_hub("hf", env=served).hub_identity == "hf:http://127.0.0.1:8080"
    assert HuggingFaceHub(endpoint="https://huggingface.co/").hub_identity == identity_of("hf", {})
    assert len({local, git, identity_of("hf", served), identity_of("hf", {})}) == 4
    roots = {RepoCache.of(tmp_path, "acme/k", h).root for h in (local, git)}
    assert len(roots) == 2


def test_same_repo_on_two_hubs_never_shares_refs(env: dict[str, Any],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The same id, ``v1`` at a different commit on each hub: offline, each hub's load returns
    that hub's commit, never the other's (the second online load used to overwrite refs/v1)."""
    tmp, a_hub, b_hub = env["tmp"], env["hub"], LocalGitHub(env["tmp"] / "hub-b")
    a_commit = publish(a_hub, tmp, "acme/k", "v1", factor=2.0)
    b_commit = publish(b_hub, tmp, "acme/k", "v1", factor=5.0)
    assert a_commit != b_commit
    x = torch.ones(2)
    a = api.get_kernel("acme/k", version=1, trust_remote_code=True)  # KERNELKIT_HUB = hub A
    monkeypatch.delenv("KERNELKIT_HUB")
    monkeypatch.setenv("KERNELKIT_HUB_DIR", str(b_hub.root))
    b = api.get_kernel("acme/k", version=1, trust_remote_code=True)  # hub B, from the settings
    assert torch.equal(a.scale(x), x * 2) and torch.equal(b.scale(x), x * 5)
    monkeypatch.setenv("KERNELKIT_OFFLINE", "1")
    monkeypatch.setenv("KERNELKIT_TRUSTED_PUBLISHERS", "acme")
    for selected, commit, factor in ((a_hub, a_commit, 2.0), (b_hub, b_commit, 5.0)):
        monkeypatch.setenv("KERNELKIT_HUB", str(selected.root))
        mod = api.get_kernel("acme/k", version=1)
        assert torch.equal(mod.scale(x), x * factor)
        assert api.install_kernel("acme/k", version=1).parent.parent.name == commit
    monkeypatch.setenv("KERNELKIT_HUB", str(tmp / "hub-never-seen"))
    with pytest.raises(OfflineError, match="not in the local cache"):
        api.get_kernel("acme/k", version=1)


def test_a_branch_and_a_tag_of_one_name_never_share_a_ref(env: dict[str, Any],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Branch ``x`` and tag ``x`` at different commits: offline, ``revision="x"`` is what the
    hub answers online (the branch), not whichever was written last (the tag used to win)."""
    from kernelkit.loader.offline import cached_refs

    hub, tmp, repo = env["hub"], env["tmp"], "acme/bt"
    branch = publish(hub, tmp, repo, "x", factor=2.0)
    tagged = publish(hub, tmp, repo, "v1", factor=3.0)
    hub.tag(repo, "x", tagged)
    assert hub.resolve(repo, "x") == branch
    api.get_kernel(repo, version=1, trust_remote_code=True)  # lists (and records) every ref
    api.get_kernel(repo, revision=branch, trust_remote_code=True)  # both commits cached
    refs = cached_refs(RepoCache.of(env["cache"], repo, hub.hub_identity))
    assert refs.branches["x"] == branch and refs.tags["x"] == tagged
    monkeypatch.setenv("KERNELKIT_OFFLINE", "1")
    x = torch.ones(2)
    got = api.get_kernel(repo, revision="x", trust_remote_code=True)
    assert torch.equal(got.scale(x), x * 2)


# --- 2. upload under concurrency -------------------------------------------------------------


def test_eight_concurrent_uploads_of_different_versions(tmp_path: Path) -> None:
    hub_dir = tmp_path / "hub"
    procs = []
    for i in range(1, 9):
        proj = tmp_path / f"p{i}"
        make_variant(proj / "build", HOST, version=i, uid=uid())
        (proj / "build" / "CARD.md").write_text(f"# k {i}\n")  # README.md on main too
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "kernelkit", "upload", str(proj), "--repo-id", "org/k",
             "--branch", f"v{i}", "--tag", f"v{i}.0.0", "--hub", str(hub_dir)],
            env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    results = [(p.returncode, err) for p, (_, err) in
               ((p, p.communicate(timeout=300)) for p in procs)]
    assert all(rc == 0 for rc, _ in results), results
    refs = LocalGitHub(hub_dir).list_refs("org/k")
    assert set(refs.branches) == {"main", *(f"v{i}" for i in range(1, 9))}
    assert dict(refs.tags) == {
        f"v{i}.0.0": refs.branches[f"v{i}"] for i in range(1, 9)}
    fsck = subprocess.run(["git", f"--git-dir={hub_dir / 'org' / 'k.git'}", "fsck", "--strict"],
                          capture_output=True, text=True)
    assert fsck.returncode == 0, fsck.stderr


def test_branch_and_tag_land_together_or_not_at_all(tmp_path: Path) -> None:
    hub = LocalGitHub(tmp_path / "hub")
    v = make_variant(tmp_path / "a" / "build", HOST, uid=uid())
    files = {f"build/{HOST}/{p.name}": p for p in v.iterdir() if p.is_file()}
    first = hub.publish_tagged("org/t", "v1", files, tag="v1.0.0")
    w = make_variant(tmp_path / "b" / "build", HOST, uid=uid(), factor=3.0)
    other = {f"build/{HOST}/{p.name}": p for p in w.iterdir() if p.is_file()}
    with pytest.raises(HubError, match="tags never move"):
        hub.publish_tagged("org/t", "v1", other, tag="v1.0.0")
    assert hub.list_refs("org/t").branches["v1"] == first  # the branch did not move either


# --- 3. names anchored with \Z ----------------------------------------------------------------


@pytest.mark.parametrize("repo_id", ["org/nl\n", "org\n/x", "a" * 300 + "/x", "org/x/y", "/x"])
def test_bad_repo_ids_are_refused_before_any_path_is_built(env: dict[str, Any],
                                                            repo_id: str) -> None:
    with pytest.raises(HubError, match="invalid repository id"):
        api.get_kernel(repo_id, version=1, trust_remote_code=True, hub=env["hub"])
    with pytest.raises(HubError, match="invalid repository id"):
        env["hub"].repo_path(repo_id)
    assert not env["cache"].exists() or not any(env["cache"].iterdir())


def test_upload_refuses_a_repo_id_ending_in_newline(tmp_path: Path) -> None:
    proj = tmp_path / "p"
    make_variant(proj / "build", HOST, uid=uid())
    err = one_line_error(cli("upload", str(proj), "--repo-id", "org/nl\n",
                             "--hub", str(tmp_path / "hub")))
    assert "invalid repository id" in err
    assert not (tmp_path / "hub").exists() or not list((tmp_path / "hub").rglob("*.git"))


@pytest.mark.parametrize("revision", ["main\n", "v1\n", "..", "a..b", "x" * 300, "-rf", ""])
def test_bad_revisions_are_refused_and_cache_nothing(env: dict[str, Any], revision: str) -> None:
    publish(env["hub"], env["tmp"], "kernels-community/demo", "main")
    with pytest.raises(VersionRequestError, match="invalid revision"):
        api.get_kernel("kernels-community/demo", revision=revision, hub=env["hub"])
    rc = RepoCache.of(env["cache"], "kernels-community/demo", env["hub"].hub_identity)
    refs = rc.root / "refs"
    assert not refs.exists() or not any("%0A" in n for n in os.listdir(refs))


# --- 4. metadata.json's id ----------------------------------------------------------------


def _with_id(vdir: Path, kernel_id: str) -> None:
    meta = Metadata.read(vdir / "metadata.json")
    seal_variant(vdir, Metadata(**{**meta.__dict__, "id": kernel_id, "digest": None}))


def test_a_kernel_whose_id_is_json_does_not_replace_sys_modules_json(env: dict[str, Any]) -> None:
    hub, tmp = env["hub"], env["tmp"]
    build = tmp / "b"
    _with_id(make_variant(build, HOST, uid=uid()), "json")
    files = {f"build/{p.relative_to(build).as_posix()}": p for p in build.rglob("*")
             if p.is_file()}
    hub.publish("evil/json", "v1", files)
    before = sys.modules["json"]
    mod = api.get_kernel("evil/json", version=1, trust_remote_code=True, hub=hub)
    assert sys.modules["json"] is before and mod is not before
    assert mod.__name__.startswith("_kernelkit_demo_")


def test_an_impostor_claiming_another_kernels_id_is_not_returned_for_it(
        env: dict[str, Any]) -> None:
    hub, tmp = env["hub"], env["tmp"]
    real_uid = uid()
    publish(hub, tmp, "good/k", "v1", uid=real_uid, factor=2.0)
    build = tmp / "impostor"
    make_variant(build, HOST, uid=uid(), factor=9.0)
    _with_id(build / HOST, f"_demo_cpu_{real_uid}")
    files = {f"build/{p.relative_to(build).as_posix()}": p for p in build.rglob("*")
             if p.is_file()}
    hub.publish("evil/k", "v1", files)
    real = api.get_kernel("good/k", version=1, trust_remote_code=True, hub=hub)
    before = set(sys.modules)
    with pytest.raises(KernelIdConflictError, match="different build") as info:
        api.get_kernel("evil/k", version=1, trust_remote_code=True, hub=hub)
    assert info.value.kernel_id == f"_demo_cpu_{real_uid}"
    assert "__init__.py: different content" in info.value.differences
    assert set(sys.modules) == before  # the impostor's code never ran
    x = torch.ones(1)
    assert torch.equal(real.scale(x), x * 2)
    assert all(lk.module is real for lk in api.get_loaded_kernels()
               if lk.metadata.id == f"_demo_cpu_{real_uid}")


@pytest.mark.parametrize("bad_id", ["json\n", "a.b", "os.path", "", "1abc", "x" * 500])
def test_invalid_ids_are_metadata_errors(tmp_path: Path, bad_id: str) -> None:
    vdir = make_variant(tmp_path / "b", HOST, uid=uid())
    data = json.loads((vdir / "metadata.json").read_text())
    data["id"] = bad_id
    (vdir / "metadata.json").write_text(json.dumps(data))
    with pytest.raises(MetadataError, match="id"):
        Metadata.read(vdir / "metadata.json")


def test_metadata_json_is_covered_by_the_digest(env: dict[str, Any]) -> None:
    hub, tmp = env["hub"], env["tmp"]
    build = tmp / "b"
    vdir = make_variant(build, HOST, uid=uid())
    data = json.loads((vdir / "metadata.json").read_text())
    assert isinstance(data["digest"].get("metadata"), str)
    data["python-depends"] = ["einops"]  # changed after sealing: digest.metadata no longer fits
    (vdir / "metadata.json").write_text(json.dumps(data))
    files = {f"build/{p.relative_to(build).as_posix()}": p for p in build.rglob("*")
             if p.is_file()}
    hub.publish("kernels-community/tampered", "v1", files)
    with pytest.raises(IntegrityError, match=r"metadata\.json"):
        api.get_kernel("kernels-community/tampered", version=1, hub=hub)
    rc = RepoCache.of(env["cache"], "kernels-community/tampered", env["hub"].hub_identity)
    assert not list(rc.root.glob(f"*/build/{HOST}"))


def test_upstream_kernels_reads_the_extended_digest(tmp_path: Path) -> None:
    rust = pytest.importorskip("kernels._rust")
    vdir = make_variant(tmp_path / "b", HOST, uid=uid())
    meta = rust.Metadata.read_from_file(vdir / "metadata.json")
    assert meta.digest is not None and len(meta.digest.files) == 3  # symbols.json too
    # upstream's own digest check (kernels verify-signature) passes on our extended digest
    meta.digest.validate(rust.Digest.hash_variant(meta.digest.algorithm, vdir))


# --- 5. tracebacks -> one-line errors ---------------------------------------------------------


def test_deeply_nested_build_toml(tmp_path: Path) -> None:
    (tmp_path / "build.toml").write_text("x = " + "[" * 5000 + "]" * 5000 + "\n")
    err = one_line_error(cli("check-config", str(tmp_path)))
    assert "nested" in err


def test_deeply_nested_metadata_json(tmp_path: Path) -> None:
    (tmp_path / "metadata.json").write_text("[" * 100000 + "]" * 100000)
    with pytest.raises(MetadataError, match="nested too deeply"):
        Metadata.read(tmp_path / "metadata.json")


def test_binary_kernels_lock_and_pyproject(tmp_path: Path) -> None:
    from kernelkit.lock.lockfile import read_locks
    from kernelkit.lock.project import read_dependencies

    (tmp_path / "kernels.lock").write_bytes(b"\xff\xfe\x00binary")
    (tmp_path / "pyproject.toml").write_bytes(b"\xff\xfe\x00binary")
    with pytest.raises(LockError, match="UTF-8"):
        read_locks(tmp_path / "kernels.lock")
    with pytest.raises(LockError, match="UTF-8"):
        read_dependencies(tmp_path)
    (tmp_path / "kernels.lock").write_text("[" * 100000)
    with pytest.raises(LockError):
        read_locks(tmp_path / "kernels.lock")


def test_braces_in_a_hub_url() -> None:
    from kernelkit.hub import open_hub

    for url in ("git+file:///srv/{nope}/x", "git+file:///srv/{org/x", "git+ssh://h/{0}"):
        with pytest.raises(HubError, match="invalid hub URL"):
            open_hub(url)


def test_huge_version_specifiers_and_empty_version(env: dict[str, Any]) -> None:
    for version in ("1" * 5000, ">=" + "1" * 5000, "", "   ", 10**5000, -1):
        with pytest.raises(VersionRequestError):
            api.get_kernel("kernels-community/demo", version=version, hub=env["hub"])


def test_unwritable_download_destination(env: dict[str, Any]) -> None:
    hub, tmp = env["hub"], env["tmp"]
    publish(hub, tmp, "kernels-community/dl", "v1")
    proj = tmp / "app"
    proj.mkdir()
    (proj / "pyproject.toml").write_text(
        '[tool.kernels.dependencies]\n"kernels-community/dl" = 1\n')
    assert cli("lock", str(proj), "--hub", str(hub.root)).returncode == 0
    blocker = tmp / "file"
    blocker.write_text("x")
    err = one_line_error(cli("download", str(proj), "--dest", str(blocker / "sub"),
                             "--hub", str(hub.root)))
    assert str(blocker) in err


def test_unwritable_upload_and_to_wheel_destinations(env: dict[str, Any]) -> None:
    hub, tmp = env["hub"], env["tmp"]
    publish(hub, tmp, "kernels-community/tw", "v1")
    blocker = tmp / "file"
    blocker.write_text("x")
    proj = tmp / "p"
    make_variant(proj / "build", HOST, uid=uid())
    err = one_line_error(cli("upload", str(proj), "--repo-id", "acme/up", "--hub",
                             str(blocker / "hub")))
    assert str(blocker) in err
    err = one_line_error(cli("to-wheel", "kernels-community/tw", "--version", "1", "--hub",
                             str(hub.root), "--dest", str(blocker / "dist")))
    assert str(blocker) in err


def test_unwritable_init_destination(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert str(blocker) in one_line_error(cli("init", str(blocker / "proj"), "--name",
                                              "acme/proj"))


# --- lesser ones ----------------------------------------------------------------------------


def test_interrupted_download_staging_is_removed_by_the_next_load(env: dict[str, Any]) -> None:
    hub, tmp = env["hub"], env["tmp"]
    commit = publish(hub, tmp, "kernels-community/st", "v1")
    rc = RepoCache.of(env["cache"], "kernels-community/st", env["hub"].hub_identity)
    stale = rc.variant_dir(commit, HOST).parent / f".{HOST}.fetch-deadbeef0000"
    (stale / "build" / HOST).mkdir(parents=True)
    (stale / "build" / HOST / "half.so").write_bytes(b"\0" * 10)
    api.get_kernel("kernels-community/st", version=1, hub=hub)
    assert not stale.exists()
    # left: the receipt and the hub's signature file (recorded at download; docs/security.md)
    assert sorted(p.name for p in stale.parent.iterdir() if p.name.startswith(f".{HOST}.")) \
        == [f".{HOST}.kksig", f".{HOST}.receipt"]


def test_replace_dir_recovers_an_old_tree_set_aside(tmp_path: Path) -> None:
    from kernelkit.util.fs import recover_dir, replace_dir

    dest = tmp_path / "tree"
    aside = tmp_path / ".tree.old-0123456789ab"  # a crash between the two fallback renames
    aside.mkdir()
    (aside / "f").write_text("old")
    recover_dir(dest)
    assert (dest / "f").read_text() == "old" and not aside.exists()
    new = tmp_path / "new"
    new.mkdir()
    (new / "f").write_text("new")
    replace_dir(new, dest)
    assert (dest / "f").read_text() == "new" and sorted(os.listdir(tmp_path)) == ["tree"]


def test_check_config_refuses_parent_and_absolute_source_paths(tmp_path: Path) -> None:
    from kernelkit.scaffold import init_project

    proj = tmp_path / "k"
    init_project(proj, name="acme/kk", backends=["cpu"])
    text = (proj / "build.toml").read_text()
    import re

    bad = re.sub(r'src = \[\n?\s*"([^"]+)"', 'src = ["../../etc/passwd", "/abs/x.cpp", "\\1"',
                 text, count=1)
    assert bad != text
    (proj / "build.toml").write_text(bad)
    proc = cli("check-config", str(proj))
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "leaves the project directory" in proc.stderr and "is absolute" in proc.stderr


def test_offline_mode_refuses_hub_commands(tmp_path: Path) -> None:
    for args in (["info", "acme/x"], ["lock", str(tmp_path)],
                 ["download", str(tmp_path)]):
        err = one_line_error(cli(*args, "--hub", str(tmp_path / "hub"),
                                 env={"KERNELKIT_OFFLINE": "1"}))
        assert "offline mode is on" in err


def test_git_file_hub_is_never_created_at_the_root_or_under_a_missing_parent(
        tmp_path: Path) -> None:
    from kernelkit.hub.git_remote import GitRemoteHub

    v = make_variant(tmp_path / "b", HOST, uid=uid())
    files = {f"build/{HOST}/{p.name}": p for p in v.iterdir() if p.is_file()}
    for url in (f"git+file://{tmp_path}/missing/deeper/hub", "git+file:///kk-typo-hub"):
        hub = GitRemoteHub(url, tmp_path / "cache")
        with pytest.raises(HubError, match="refusing to create"):
            hub.publish("acme/x", "v1", files)
    assert not (tmp_path / "missing").exists() and not Path("/kk-typo-hub").exists()


def test_version_not_found_with_no_versions_says_none(env: dict[str, Any]) -> None:
    publish(env["hub"], env["tmp"], "kernels-community/nov", "main")
    with pytest.raises(ValueError, match="available versions: none"):
        api.get_kernel("kernels-community/nov", version=3, hub=env["hub"])


@pytest.mark.parametrize("name", ["v1\n", "main\n", "v1.0.0\n", "\nv1"])
def test_branch_and_tag_names_ending_in_newline_are_refused(name: str) -> None:
    from kernelkit.hub.names import check_ref_name
    from kernelkit.publish.upload import check_tag

    with pytest.raises(HubError):
        check_ref_name(name, "branch")
    with pytest.raises(HubError):
        check_tag(name, "v1")


# === issue 24: the second round ===============================================================
# (items 1, 2, 11 and 15; the loader's and serve's items have their own sections)

HUGE = "9" * 5000  # beyond Python's int-string limit (4300 digits)


def kernel_project(tmp: Path, name: str = "acme/kk") -> Path:
    from kernelkit.scaffold import init_project

    proj = tmp / name.split("/")[1]
    init_project(proj, name=name, backends=["cpu"], git=False)
    return proj


def publish_tree(hub: LocalGitHub, repo_id: str, build: Path, branch: str = "v1") -> str:
    files = {f"build/{p.relative_to(build).as_posix()}": p for p in sorted(build.rglob("*"))
             if p.is_file()}
    return hub.publish(repo_id, branch, files, delete_prefixes=("build/",))


def cli_limited(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``cli`` in a process of at most 2 GiB of address space and 60 s: a reader that
    slurps /dev/zero or blocks on a FIFO fails here instead of taking the machine with it."""
    import resource

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    full = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run([sys.executable, "-m", "kernelkit", *args], capture_output=True,
                          text=True, env=full, cwd=cwd, timeout=60, preexec_fn=limit)


# --- item 1: to-wheel verifies digests and names nothing after hub metadata ------------------


def test_to_wheel_refuses_a_tampered_variant_as_get_kernel_does(env: dict[str, Any]) -> None:
    """A changed file plus an extra one: to-wheel used to write the wheel (exit 0)."""
    hub, tmp = env["hub"], env["tmp"]
    build = tmp / "b"
    vdir = make_variant(build, HOST, uid=uid())
    (vdir / "__init__.py").write_text((vdir / "__init__.py").read_text() + "\nEVIL = 1\n")
    (vdir / "extra.py").write_text("EVIL = 2\n")
    publish_tree(hub, "kernels-community/tw", build)
    dest = tmp / "dist"
    proc = cli("to-wheel", "kernels-community/tw", "--version", "1", "--hub", str(hub.root),
               "--dest", str(dest))
    assert proc.returncode == ExitCode.INTEGRITY, proc.stderr
    assert "does not match" in one_line_error(proc) or "digest" in proc.stderr
    assert not dest.exists() or not list(dest.iterdir())
    with pytest.raises(IntegrityError):
        api.get_kernel("kernels-community/tw", version=1, hub=hub)


def test_to_wheel_names_the_package_after_the_repository_not_hub_metadata(
        env: dict[str, Any]) -> None:
    """metadata.json ``name = "sitecustomize"`` used to install a sitecustomize/ package that
    runs in every later Python process; a license with a newline could add a Requires-Dist."""
    import email.parser
    import zipfile

    hub, tmp = env["hub"], env["tmp"]
    build = tmp / "b"
    vdir = make_variant(build, HOST, name="sitecustomize", uid=uid())
    meta = Metadata.read(vdir / "metadata.json")
    seal_variant(vdir, Metadata(**{**meta.__dict__, "digest": None,
                                   "license": "MIT\nRequires-Dist: evil-package"}))
    publish_tree(hub, "acme/relu", build)
    dest = tmp / "dist"
    proc = cli("to-wheel", "acme/relu", "--version", "1", "--hub", str(hub.root), "--dest",
               str(dest))
    assert proc.returncode == 0, proc.stderr
    [wheel] = dest.iterdir()
    assert wheel.name.startswith("relu-1+")
    with zipfile.ZipFile(wheel) as zf:
        tops = {n.split("/")[0] for n in zf.namelist()}
        meta_text = zf.read(next(n for n in zf.namelist() if n.endswith("/METADATA"))).decode()
    assert tops == {"relu", next(t for t in tops if t.endswith(".dist-info"))}
    headers = email.parser.Parser().parsestr(meta_text)
    assert headers["Name"] == "relu" and "\nRequires-Dist: evil" not in meta_text
    [requirement] = headers.get_all("Requires-Dist")  # the license stayed one (folded) header
    assert requirement.startswith("torch") and "evil-package" in headers["License"]


@pytest.mark.parametrize(("repo_id", "why"), [
    ("acme/sitecustomize", "would shadow a module Python or torch relies on"),
    ("acme/usercustomize", "would shadow a module Python or torch relies on"),
    ("acme/torch", "would shadow a module Python or torch relies on"),
    ("acme/json", "standard library"),
    ("acme/Site", "standard library"),
    ("acme/2d-conv", "not a Python identifier"),
    ("acme/numpy", "installed distribution numpy"),
])
def test_to_wheel_refuses_packages_that_shadow_others(env: dict[str, Any], repo_id: str,
                                                      why: str) -> None:
    from kernelkit.wheel.api import kernel_to_wheels
    from kernelkit.wheel.naming import Installed, installed_packages

    hub, tmp = env["hub"], env["tmp"]
    publish(hub, tmp, repo_id, "v1")
    with pytest.raises(KernelkitError, match=why):
        kernel_to_wheels(repo_id, hub, tmp / "dist", cache_dir=env["cache"], version=1)
    assert not (tmp / "dist").exists()
    assert installed_packages()["numpy"] == [Installed("numpy", None)]  # the real environment
    # an earlier wheel of the same kernel is no obstacle; a same-named other package is
    publish(hub, tmp, "acme/relu", "v1")
    ours = {"relu": [Installed("relu", "acme/relu")]}
    assert kernel_to_wheels("acme/relu", hub, tmp / "dist", cache_dir=env["cache"], version=1,
                            installed=ours)
    with pytest.raises(KernelkitError, match="installed distribution relu"):
        kernel_to_wheels("acme/relu", hub, tmp / "dist", cache_dir=env["cache"], version=1,
                         installed={"relu": [Installed("relu", "other/relu")]})


# --- item 2: no code from build.toml values into generated files ------------------------------


def _inject_kernel_name(proj: Path) -> None:
    with (proj / "build.toml").open("a") as fh:
        fh.write('\n[kernel."\\nexecute_process(COMMAND touch pwned)\\n#"]\nbackend = "cpu"\n'
                 'depends = ["torch"]\nsrc = ["kk_cpu/kk_cpu.cpp"]\n')


def _inject_flag(proj: Path) -> None:
    text = (proj / "build.toml").read_text()
    text = text.replace('src = ["kk_cpu/kk_cpu.cpp"]',
                        'src = ["kk_cpu/kk_cpu.cpp"]\ncxx-flags = ["-O2\\")\\nexecute_process('
                        'COMMAND touch pwned)\\nset(X \\""]', 1)
    assert "execute_process" in text
    (proj / "build.toml").write_text(text)


@pytest.mark.parametrize("inject", [_inject_kernel_name, _inject_flag])
def test_build_toml_values_never_reach_cmake_as_code(tmp_path: Path,
                                                     inject: Any) -> None:
    """Both reproductions used to pass check-config and run `touch pwned` at configure time."""
    proj = kernel_project(tmp_path)
    inject(proj)
    err = one_line_error(cli("check-config", str(proj)))
    assert "build.toml:" in err and ("invalid kernel name" in err or "control" in err)
    for args in (["build", str(proj)], ["create-pyproject", str(proj)]):
        assert cli(*args, cwd=proj).returncode == ExitCode.INVALID_INPUT
    assert not list(tmp_path.rglob("pwned")) and not (proj / "build").exists()
    assert not (proj / "CMakeLists.txt").exists()


def test_generators_refuse_values_that_skipped_validation() -> None:
    """A manifest built in code (no check-config) cannot smuggle CMake either."""
    from kernelkit.errors import UnsafeValueError
    from kernelkit.generate import project_files
    from kernelkit.manifest.model import General, KernelComponent, Manifest, TorchFramework

    general = General(name="kk", version=1, license="MIT", backends=("cpu",))
    for kernel in (KernelComponent(name="a)\nexecute_process(COMMAND touch pwned)\n#",
                                   backend="cpu", src=("a.cpp",), depends=()),
                   KernelComponent(name="a", backend="cpu", src=("a.cpp",), depends=(),
                                   cxx_flags=('")\nexecute_process(COMMAND touch pwned)#',))):
        manifest = Manifest(general=general, framework=TorchFramework(src=("b.cpp",)),
                            kernels=(kernel,))
        with pytest.raises(UnsafeValueError):
            project_files(manifest, "abc1234")


@pytest.mark.slow
def test_flags_and_paths_with_shell_and_cmake_syntax_compile_as_one_value(
        tmp_path: Path) -> None:
    """Allowed values full of CMake, shell and generator-expression syntax reach the compiler
    intact (checked by the compiler itself: static_asserts on the stringified macros), run
    nothing, and are recorded in the variant's provenance; upstream still reads it."""
    from kernelkit.builder.api import build

    proj = kernel_project(tmp_path)
    flags = {"KK_SHELL": "$(touch pwned)", "KK_TICK": "`touch pwned`", "KK_GT": "a>b,c",
             "KK_VAR": "${HOME}", "KK_SPACE": "a b", "KK_QUOTE": '"q"', "KK_HASH": "#x",
             "KK_CMAKE": '")\nexecute_process(COMMAND touch pwned)#"'.replace("\n", " ")}
    checks = "".join(f"static_assert(std::string_view(KK_XSTR({k})) == R\"kk({v})kk\", "
                     f"\"{k}\");\n" for k, v in flags.items())
    odd = "kk_cpu/check (touch pwned) #1 'q' +=.cpp"
    (proj / odd).write_text("#include <string_view>\n#define KK_STR(...) #__VA_ARGS__\n"
                            "#define KK_XSTR(...) KK_STR(__VA_ARGS__)\n" + checks)
    values = [f"-D{k}={v}" for k, v in flags.items()]
    text = (proj / "build.toml").read_text().replace(
        'src = ["kk_cpu/kk_cpu.cpp"]',
        f'src = ["kk_cpu/kk_cpu.cpp", {json.dumps(odd)}]\ncxx-flags = {json.dumps(values)}', 1)
    (proj / "build.toml").write_text(text)
    assert cli("check-config", str(proj)).returncode == 0, "allowed values"
    dollar = text.replace(json.dumps(odd), json.dumps("kk_cpu/a$(touch pwned).cpp"))
    (proj / "build.toml").write_text(dollar)  # CMake's Ninja generator leaves a $ unescaped
    assert "holds $" in one_line_error(cli("check-config", str(proj)))
    (proj / "build.toml").write_text(text)
    [result] = build(proj, backends=["cpu"], jobs=2)
    assert not list(tmp_path.rglob("pwned")) and not (ROOT / "pwned").exists()
    data = json.loads((result.path / "metadata.json").read_text())
    assert data["provenance"]["kernelkit"]["compile-flags"] == {
        "kernel.kk_cpu.cxx-flags": values}
    rust = pytest.importorskip("kernels._rust")  # upstream 0.19.1 parses it (and 0.17.2: docs)
    meta = rust.Metadata.read_from_file(result.path / "metadata.json")
    meta.digest.validate(rust.Digest.hash_variant(meta.digest.algorithm, result.path))


# --- item 11: numbers beyond Python's int-string limit ----------------------------------------


def test_huge_integers_in_build_toml(tmp_path: Path) -> None:
    proj = kernel_project(tmp_path)
    text = (proj / "build.toml").read_text().replace("version = 1", f"version = {HUGE}", 1)
    (proj / "build.toml").write_text(text)
    for command in ("check-config", "list-variants", "build"):
        err = one_line_error(cli(command, str(proj)))
        assert "build.toml:3:" in err and "5000-digit number" in err, (command, err)
    proj.joinpath("build").mkdir()
    make_variant(proj / "build", HOST, uid=uid())
    err = one_line_error(cli("upload", str(proj), "--repo-id", "acme/kk", "--hub",
                             str(tmp_path / "hub")))
    assert "5000-digit number" in err and not (tmp_path / "hub").exists()


def test_huge_integers_in_pyproject_and_kernels_lock(env: dict[str, Any]) -> None:
    hub, tmp = env["hub"], env["tmp"]
    publish(hub, tmp, "kernels-community/hi", "v1")
    app = tmp / "app"
    app.mkdir()
    (app / "pyproject.toml").write_text(
        f'[tool.kernels.dependencies]\n"kernels-community/hi" = {HUGE}\n')
    err = one_line_error(cli("lock", str(app), "--hub", str(hub.root)))
    assert "pyproject.toml:2:" in err and "5000-digit number" in err
    (app / "kernels.lock").write_text(f'[{{"repo_id": "kernels-community/hi", "sha": {HUGE}}}]')
    err = one_line_error(cli("download", str(app), "--hub", str(hub.root)))
    assert "kernels.lock:1:" in err and "5000-digit number" in err


def _huge_metadata(vdir: Path) -> None:
    text = (vdir / "metadata.json").read_text()
    (vdir / "metadata.json").write_text(text.replace('"version": 1', f'"version": {HUGE}', 1))


def test_huge_integers_in_metadata_json_and_kernel_status(env: dict[str, Any]) -> None:
    hub, tmp = env["hub"], env["tmp"]
    build = tmp / "b"
    vdir = make_variant(build, HOST, uid=uid())
    _huge_metadata(vdir)
    publish_tree(hub, "kernels-community/hm", build)
    with pytest.raises(MetadataError, match="5000-digit number"):
        api.get_kernel("kernels-community/hm", version=1, hub=hub)
    assert "5000-digit number" in one_line_error(cli("info", "kernels-community/hm", "--hub",
                                                     str(hub.root)))
    check = cli("check", str(build))  # a finding of the report, not a traceback
    assert check.returncode == ExitCode.ERROR and "Traceback" not in check.stderr
    assert "5000-digit number" in check.stdout
    clean = make_variant(tmp / "c", HOST, uid=uid())
    status = tmp / "status.toml"
    status.write_text(f'kind = "redirect"\ndestination = "a/b"\nrevision = {HUGE}\n')
    hub.publish("kernels-community/hs", "v1", {"kernel-status.toml": status, **{
        f"build/{HOST}/{p.name}": p for p in clean.iterdir() if p.is_file()}})
    with pytest.raises(HubError, match=r"kernel-status\.toml:3: a 5000-digit number"):
        api.get_kernel("kernels-community/hs", version=1, hub=hub)


# --- item 15: the smaller ones --------------------------------------------------------------


def test_upload_checks_output_json_before_publishing(tmp_path: Path) -> None:
    proj = tmp_path / "p"
    make_variant(proj / "build", HOST, uid=uid())
    hub = tmp_path / "hub"
    for target in (tmp_path, tmp_path / "missing" / "out.json"):
        proc = cli("upload", str(proj), "--repo-id", "acme/oj", "--hub", str(hub),
                   "--output-json", str(target))
        deprecated = "warning: --output-json is deprecated: use --json"
        assert proc.stderr.startswith(deprecated)  # the option still works, and says so
        proc.stderr = proc.stderr.split("\n", 1)[1]
        err = one_line_error(proc)
        assert str(target) in err
        assert not LocalGitHub(hub).repo_exists("acme/oj")  # nothing was published
    out = tmp_path / "out.json"
    assert cli("upload", str(proj), "--repo-id", "acme/oj", "--hub", str(hub),
               "--output-json", str(out)).returncode == 0
    assert json.loads(out.read_text())["status"] == "uploaded"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".out.json")] == []


def test_a_killed_kernels_lock_writer_leaves_no_temp_file_behind(tmp_path: Path) -> None:
    from kernelkit.lock.lockfile import read_locks, write_locks

    path = tmp_path / "kernels.lock"
    code = ("import os, signal, sys; from pathlib import Path\n"
            "from kernelkit.lock.lockfile import write_locks\n"
            "os.fsync = lambda fd: os.kill(os.getpid(), signal.SIGKILL)\n"
            "write_locks(Path(sys.argv[1]), [])\n")
    proc = subprocess.run([sys.executable, "-c", code, str(path)],
                          env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    assert proc.returncode == -9
    [stale] = [p for p in tmp_path.iterdir() if p.name.endswith(".incomplete")]
    fresh = tmp_path / ".kernels.lock.fresh.incomplete"  # a concurrent writer's, seconds old
    fresh.write_text("")
    old = stale.stat().st_mtime - 3600
    os.utime(stale, (old, old))
    assert write_locks(path, [])
    assert read_locks(path) == [] and not stale.exists() and fresh.exists()


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "huge", "directory"])
def test_input_files_are_read_bounded_and_regular_only(tmp_path: Path, kind: str) -> None:
    """A FIFO build.toml hung check-config, a link to /dev/zero gave MemoryError, 1 GB took
    minutes; every input file goes through one bounded reader now."""
    proj = kernel_project(tmp_path)
    app = tmp_path / "app"
    app.mkdir()
    targets = {proj / "build.toml": ["check-config", str(proj)],
               app / "pyproject.toml": ["lock", str(app), "--hub", str(tmp_path / "hub")],
               app / "kernels.lock": ["download", str(app), "--hub", str(tmp_path / "hub")]}
    (app / "pyproject.toml").write_text('[tool.kernels.dependencies]\n"a/b" = 1\n')
    for path, args in targets.items():
        if path.name == "kernels.lock":
            path.unlink(missing_ok=True)
        else:
            path.replace(path.with_suffix(".bak"))
        if kind == "fifo":
            os.mkfifo(path)
        elif kind == "dev-zero":
            path.symlink_to("/dev/zero")
        elif kind == "huge":
            with path.open("wb") as fh:
                fh.truncate(1 << 30)  # sparse: 1 GiB to read, nothing on disk
        else:
            path.mkdir()
        proc = cli_limited(*args)
        err = one_line_error(proc)
        assert path.name in err and ("not a regular file" in err or "larger than" in err), err
        if path.is_dir() and not path.is_symlink():
            path.rmdir()
        else:
            path.unlink()
        if path.with_suffix(".bak").exists():
            path.with_suffix(".bak").replace(path)


@pytest.mark.parametrize("value", ['"acme/relu\\n"', '"../../etc"', '"acme/relu/x"'])
def test_check_config_refuses_bad_hub_repo_ids(tmp_path: Path, value: str) -> None:
    proj = kernel_project(tmp_path)
    text = (proj / "build.toml").read_text().replace('repo-id = "acme/kk"',
                                                      f"repo-id = {value}", 1)
    assert value in text
    (proj / "build.toml").write_text(text)
    err = one_line_error(cli("check-config", str(proj)))
    assert "general.hub.repo-id" in err and "invalid repository id" in err


def test_bad_environment_values_are_usage_errors(tmp_path: Path) -> None:
    proj = kernel_project(tmp_path)
    err = one_line_error(cli("build", str(proj), "--dry-run",
                             env={"KERNELKIT_CUDA_CAPABILITIES": "abc"}))
    assert "KERNELKIT_CUDA_CAPABILITIES" in err
    for endpoint in ("::::", "http://", "ftp://host"):
        err = one_line_error(cli("variants", "acme/x", "--hub", "hf",
                                 env={"HF_ENDPOINT": endpoint}))
        assert "HF_ENDPOINT" in err and "invalid Hugging Face Hub endpoint" in err


def test_versions_with_control_characters_are_refused(env: dict[str, Any]) -> None:
    publish(env["hub"], env["tmp"], "kernels-community/vn", "v1")
    for version in ("1\n", ">=1\n", "1\t"):
        with pytest.raises(VersionRequestError):
            api.get_kernel("kernels-community/vn", version=version, hub=env["hub"])
    app = env["tmp"] / "app"
    app.mkdir()
    (app / "pyproject.toml").write_text(
        '[tool.kernels.dependencies]\n"kernels-community/vn" = "1\\n"\n')
    assert "neither a major version" in one_line_error(cli("lock", str(app), "--hub",
                                                           str(env["hub"].root)))


def test_download_names_a_locked_commit_the_hub_does_not_have(env: dict[str, Any]) -> None:
    hub, tmp = env["hub"], env["tmp"]
    publish(hub, tmp, "kernels-community/gone", "v1")
    app = tmp / "app"
    app.mkdir()
    (app / "pyproject.toml").write_text(
        '[tool.kernels.dependencies]\n"kernels-community/gone" = 1\n')
    assert cli("lock", str(app), "--hub", str(hub.root)).returncode == 0
    lock = app / "kernels.lock"
    missing = "a" * 40
    lock.write_text(re.sub(r"[0-9a-f]{40}", missing, lock.read_text(), count=1))
    err = one_line_error(cli("download", str(app), "--hub", str(hub.root)))
    assert missing in err and "kernels-community/gone" in err and "kernelkit lock" in err
    assert "ls-tree" not in err
# --- issue 24 item 7: credentials in a hub URL ------------------------------------------------


def test_hub_url_credentials_never_reach_argv_logs_errors_or_files(tmp_path: Path) -> None:
    """A real git smart-HTTP server (git http-backend) on 127.0.0.1 that demands Basic auth:
    upload, load and list through ``KERNELKIT_HUB=git+http://alice:SECRET@...`` with ``-v``;
    the secret reaches the server, and no argv (a recording ``git`` on PATH, and every
    process's /proc/<pid>/cmdline sampled meanwhile), output, error, log line or file under
    HOME and the cache. (The URL is given in the environment: on kernelkit's own command line
    it would be visible to every user, as any argument is.)"""
    from tests.githttp import ArgvWatcher, git_http_server, recording_git

    secret, wrong = f"s3cr3t-{uuid.uuid4().hex}", f"wr0ng-{uuid.uuid4().hex}"
    argv_log = tmp_path / "git-argv.log"
    bin_dir = recording_git(tmp_path / "bin", argv_log)
    env = {"HOME": str(tmp_path / "home"), "KERNELKIT_CACHE": str(tmp_path / "cache"),
           "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
           "KERNELKIT_TRUSTED_PUBLISHERS": "acme", "GIT_CONFIG_NOSYSTEM": "1"}
    (tmp_path / "home").mkdir()
    make_variant(tmp_path / "proj" / "build", HOST, uid=uid())
    with git_http_server(tmp_path / "srv", "alice", secret) as srv, \
            ArgvWatcher(secret) as watch_secret, ArgvWatcher(wrong) as watch_wrong:
        srv.create("acme/tok")
        hub = srv.url.replace("http://", f"git+http://alice:{secret}@")
        up = cli("-v", "upload", str(tmp_path / "proj"), "--repo-id", "acme/tok",
                 "--tag", "v1.0.0", env={**env, "KERNELKIT_HUB": hub})
        assert up.returncode == 0, up.stderr
        load = subprocess.run(
            [sys.executable, "-c", ("import logging, kernelkit\n"
                                    "logging.basicConfig(level=logging.DEBUG)\n"
                                    "k = kernelkit.get_kernel('acme/tok', version=1)\n")],
            capture_output=True, text=True, timeout=120,
            env={**os.environ, "PYTHONPATH": str(ROOT / "src"), **env, "KERNELKIT_HUB": hub})
        assert load.returncode == 0, load.stderr
        listed = cli("-v", "variants", "acme/tok", "--all-versions",
                     env={**env, "KERNELKIT_HUB": hub})
        assert listed.returncode == 0 and "Version 1 (" in listed.stdout, listed.stderr
        refused = cli("-v", "variants", "acme/tok", "--all-versions", env={
            **env, "KERNELKIT_HUB": hub.replace(secret, wrong),
            "KERNELKIT_CACHE": str(tmp_path / "cache2")})
    assert f"alice:{secret}" in srv.offered  # the credentials did reach the server
    assert f"alice:{wrong}" in srv.offered
    assert refused.returncode == 1 and "Traceback" not in refused.stderr, refused.stderr
    assert "error: cannot read kernel repository acme/tok" in refused.stderr
    for proc in (up, load, listed, refused):
        shown = proc.stdout + proc.stderr
        assert secret not in shown and wrong not in shown, shown
    assert "run: git" in up.stderr  # -v did log the git commands
    argv = argv_log.read_text()
    assert " push " in argv and " fetch " in argv
    assert secret not in argv and wrong not in argv, argv
    assert watch_secret.scans > 0 and watch_secret.seen == [] and watch_wrong.seen == []
    for root in (tmp_path / "home", tmp_path / "cache", tmp_path / "cache2"):
        for f in root.rglob("*"):
            if f.is_file():
                data = f.read_bytes()
                assert secret.encode() not in data and wrong.encode() not in data, f
