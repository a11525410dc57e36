"""get_kernel & friends against a real local git hub, with synthetic variants that register real
torch ops under their unique namespaces (tests/helpers.py::make_variant)."""

from __future__ import annotations

import logging
import os
import shutil
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from kernelkit.errors import IntegrityError, OfflineError, TrustError, VariantNotFoundError  # noqa: E402
from kernelkit.hub.local import LocalGitHub  # noqa: E402
from kernelkit.loader import api  # noqa: E402
from kernelkit.loader.cache import RepoCache  # noqa: E402
from kernelkit.variants.host import InvalidBackendError, detect_system  # noqa: E402
from tests.helpers import loaded_id, make_variant, publish_build  # noqa: E402

REPO = "kernels-community/demo"


HOST = detect_system().arch_variant() or "torch-cpu"


class CountingHub:
    """Forwards every call to a real hub and records the method names."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.inner, name)
        if not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls.append(name)
            return attr(*args, **kwargs)

        return call


def uid() -> str:
    return uuid.uuid4().hex[:7]


def publish(hub: LocalGitHub, tmp: Path, repo_id: str, branch: str,
            variants: dict[str, dict[str, Any]]) -> str:
    """Build the given variants (name -> make_variant kwargs) and publish them as ``build/``."""
    build = tmp / f"build-{uuid.uuid4().hex[:8]}"
    for variant, kwargs in variants.items():
        make_variant(build, variant, **kwargs)
    return publish_dir(hub, repo_id, branch, build)


def publish_dir(hub: LocalGitHub, repo_id: str, branch: str, build: Path) -> str:
    return publish_build(hub, repo_id, branch, build)


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    hub = LocalGitHub(tmp_path / "hub")
    cache = tmp_path / "cache"
    for var in ("LOCAL_KERNELS", "KERNELKIT_OFFLINE", "HF_HUB_OFFLINE",
                "KERNELKIT_TRUSTED_PUBLISHERS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("KERNELKIT_CACHE", str(cache))
    monkeypatch.setenv("KERNELKIT_HUB", str(tmp_path / "hub"))
    return {"hub": hub, "cache": cache, "tmp": tmp_path}


def test_two_versions_side_by_side(env: dict[str, Any], caplog: pytest.LogCaptureFixture) -> None:
    hub, tmp = env["hub"], env["tmp"]
    u1, u2 = uid(), uid()
    c1 = publish(hub, tmp, REPO, "v1", {HOST: dict(uid=u1, factor=2.0, tag="v1", version=1)})
    c2 = publish(hub, tmp, REPO, "v2", {HOST: dict(uid=u2, factor=3.0, tag="v2", version=2)})
    with caplog.at_level(logging.WARNING):
        k1 = api.get_kernel(REPO, version=1, hub=hub)
    assert f"You are using version 1 of '{REPO}', but version 2 is available." in caplog.text
    k2 = api.get_kernel(REPO, version=2, hub=hub)
    assert k1 is not k2
    # module names come from kernelkit (the variant's cache path), not from metadata.id
    assert k1.__name__ != k2.__name__
    assert k1.__name__.startswith("_kernelkit_demo_") and k2.__name__.startswith("_kernelkit_demo_")
    assert f"_demo_cpu_{u1}" not in sys.modules and f"_demo_cpu_{u2}" not in sys.modules
    assert sys.modules[k1.__name__] is k1 and sys.modules[k2.__name__] is k2
    x = torch.arange(4.0)
    assert torch.equal(getattr(torch.ops, f"_demo_cpu_{u1}").scale(x), x * 2)
    assert torch.equal(getattr(torch.ops, f"_demo_cpu_{u2}").scale(x), x * 3)
    assert torch.equal(k1.scale(x), x * 2) and torch.equal(k2.scale(x), x * 3)
    assert (k1.VERSION_TAG, k2.VERSION_TAG) == ("v1", "v2")
    infos = {lk.module.__name__: lk for lk in api.get_loaded_kernels()}
    assert infos[k1.__name__].repo_info == api.RepoInfo(REPO, c1)
    assert infos[k2.__name__].repo_info == api.RepoInfo(REPO, c2)
    assert infos[k2.__name__].metadata.version == 2
    # content-addressed cache + refs recorded for offline version lookups
    rc = RepoCache.of(env["cache"], REPO, hub.hub_identity)
    assert (rc.variant_dir(c1, HOST) / "__init__.py").is_file()
    assert rc.read_ref("heads", "v1") == c1 and rc.read_ref("heads", "v2") == c2
    assert rc.refs("heads") == {"v1": c1, "v2": c2} and rc.refs("tags") == {}


def test_same_variant_twice_same_module_and_revision_forms(env: dict[str, Any]) -> None:
    hub, tmp = env["hub"], env["tmp"]
    commit = publish(hub, tmp, REPO, "v1", {HOST: dict(uid=uid())})
    hub.tag(REPO, "v1.0.0", commit)
    first = api.get_kernel(REPO, version=1, hub=hub)
    assert api.get_kernel(REPO, version=1, hub=hub) is first
    assert api.get_kernel(REPO, revision="v1", hub=hub) is first
    assert api.get_kernel(REPO, revision="v1.0.0", hub=hub) is first
    assert api.get_kernel(REPO, revision=commit, hub=hub) is first
    assert api.get_kernel(REPO, revision=commit[:7], hub=hub) is first  # short commit id
    rc = RepoCache.of(env["cache"], REPO, hub.hub_identity)
    assert rc.read_ref("tags", "v1.0.0") == commit  # from the listing of version=1
    assert rc.read_ref("resolved", "v1.0.0") == commit  # resolved by name after the listing
    assert rc.read_ref("resolved", commit[:7]) is None  # commit prefixes are not refs
    assert api.get_kernel(REPO, version=1, hub=hub) is first  # a newer listing ...
    assert rc.refs("resolved") == {}  # ... supersedes what was resolved by name
    paths = [lk for lk in api.get_loaded_kernels() if lk.module is first]
    assert len(paths) == 1


def test_warm_pinned_call_makes_no_hub_calls(env: dict[str, Any]) -> None:
    hub, tmp = env["hub"], env["tmp"]
    commit = publish(hub, tmp, REPO, "v1", {HOST: dict(uid=uid())})
    cold = CountingHub(hub)
    module = api.get_kernel(REPO, revision=commit, hub=cold)
    assert cold.calls == ["resolve", "read_file", "list_dirs", "list_files", "fetch",
                          "read_file"]  # the last: build/<variant>.kksig (docs/security.md)
    warm = CountingHub(hub)
    assert api.get_kernel(REPO, revision=commit, hub=warm) is module
    assert api.install_kernel(REPO, revision=commit, hub=warm).is_dir()
    assert api.has_kernel(REPO, revision=commit, hub=warm)
    assert warm.calls == []


def test_tampered_published_file_is_never_imported(env: dict[str, Any]) -> None:
    hub, tmp = env["hub"], env["tmp"]
    u = uid()
    build = tmp / "tampered"
    vdir = make_variant(build, HOST, uid=u)
    init = vdir / "__init__.py"
    init.write_text(init.read_text().replace("x * 2.0", "x * 666.0"))  # after sealing
    commit = publish_dir(hub, REPO, "v1", build)
    with pytest.raises(IntegrityError) as info:
        api.get_kernel(REPO, revision=commit, hub=hub)
    err = info.value
    assert err.file == f"{REPO}@{commit[:12]}:build/{HOST}/__init__.py"
    assert err.expected != err.actual
    assert "not imported" in str(err)
    assert f"_demo_cpu_{u}" not in sys.modules
    rc = RepoCache.of(env["cache"], REPO, hub.hub_identity)
    assert not rc.variant_dir(commit, HOST).exists()
    assert [p.name for p in (rc.commit_dir(commit) / "build").iterdir()] == []  # no leftovers


def test_unknown_extra_file_is_an_integrity_error(env: dict[str, Any]) -> None:
    hub, tmp = env["hub"], env["tmp"]
    build = tmp / "extra"
    vdir = make_variant(build, HOST, uid=uid())
    (vdir / "sneaky.py").write_text("import os\n")
    commit = publish_dir(hub, REPO, "v1", build)
    with pytest.raises(IntegrityError, match=r"sneaky.py"):
        api.install_kernel(REPO, revision=commit, hub=hub)


def _corrupt(path: Path, keep_mtime: bool) -> None:
    st = path.stat()
    data = bytearray(path.read_bytes())
    i = data.index(b"2.0")
    data[i] = ord("9")  # same size, one byte flipped
    with open(path, "r+b") as fh:  # in place: same inode
        fh.write(data)
    if keep_mtime:
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
        assert path.stat().st_mtime_ns == st.st_mtime_ns


@pytest.mark.parametrize("keep_mtime", [False, True], ids=["mtime-changed", "mtime-restored"])
def test_corrupted_cached_file_is_detected(env: dict[str, Any], keep_mtime: bool,
                                           caplog: pytest.LogCaptureFixture) -> None:
    hub, tmp = env["hub"], env["tmp"]
    commit = publish(hub, tmp, REPO, "v1", {HOST: dict(uid=uid())})
    path = api.install_kernel(REPO, revision=commit, hub=hub)
    original = (path / "__init__.py").read_bytes()
    import time

    time.sleep(0.05)  # file timestamps have jiffy granularity
    _corrupt(path / "__init__.py", keep_mtime)
    # offline: cannot repair, so it refuses (and says how to fix it)
    with pytest.raises(IntegrityError) as info:
        api.install_kernel(REPO, revision=commit, hub=hub, local_files_only=True)
    assert info.value.file.endswith(f"build/{HOST}/__init__.py")
    assert "offline" in str(info.value)
    # online: detected, downloaded again, verified
    counting = CountingHub(hub)
    with caplog.at_level(logging.WARNING):
        assert api.install_kernel(REPO, revision=commit, hub=counting) == path
    assert "corrupt" in caplog.text
    assert "fetch" in counting.calls
    assert (path / "__init__.py").read_bytes() == original
    # and the fresh receipt makes the next load cheap again
    again = CountingHub(hub)
    api.install_kernel(REPO, revision=commit, hub=again)
    assert again.calls == []


def test_touched_but_intact_file_is_rehashed_not_redownloaded(env: dict[str, Any]) -> None:
    hub, tmp = env["hub"], env["tmp"]
    commit = publish(hub, tmp, REPO, "v1", {HOST: dict(uid=uid())})
    path = api.install_kernel(REPO, revision=commit, hub=hub)
    os.utime(path / "_ops.py", ns=(1, 1))
    counting = CountingHub(hub)
    api.install_kernel(REPO, revision=commit, hub=counting)
    assert counting.calls == []


def test_missing_variant_lists_every_variant_with_reason(env: dict[str, Any]) -> None:
    hub, tmp = env["hub"], env["tmp"]
    others = ["torch212-cxx11-cpu-x86_64-linux", "torch213-cxx11-cu128-x86_64-linux",
              "torch213-metal-aarch64-darwin", "torch-cuda"]
    commit = publish(hub, tmp, REPO, "v1", {v: dict(uid=uid()) for v in others})
    with pytest.raises(VariantNotFoundError) as info:
        api.get_kernel(REPO, version=1, hub=hub)
    err = info.value
    assert sorted(r.variant for r in err.rejected) == sorted(others)
    assert all(r.reason for r in err.rejected)
    text = str(err)
    assert detect_system().describe() in text
    assert f"v1 = {commit[:12]}" in text
    for v in others:
        assert f"  - {v}: " in text
    assert "Torch version (2.12) does not match" in text
    assert not api.has_kernel(REPO, version=1, hub=hub)
    decisions = api.get_kernel_variants(REPO, version=1, hub=hub)
    assert [d.accepted for d in decisions] == [False] * 4


def test_trust(env: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    hub, tmp = env["hub"], env["tmp"]
    repo = "someone/demo"
    publish(hub, tmp, repo, "v1", {HOST: dict(uid=uid())})
    counting = CountingHub(hub)
    with pytest.raises(TrustError) as info:
        api.get_kernel(repo, version=1, hub=counting)
    assert "'someone/demo' is not from a trusted publisher" in str(info.value)
    assert "trust_remote_code=True" in str(info.value)
    assert "KERNELKIT_TRUSTED_PUBLISHERS" in str(info.value)
    assert counting.calls == []  # refused before touching the hub
    with pytest.warns(UserWarning, match="not implemented"), pytest.raises(TrustError):
        api.get_kernel(repo, version=1, hub=hub, trust_remote_code=["id@example.com"])
    module = api.get_kernel(repo, version=1, hub=hub, trust_remote_code=True)
    monkeypatch.setenv("KERNELKIT_TRUSTED_PUBLISHERS", "other, someone")
    assert api.get_kernel(repo, version=1, hub=hub) is module
    # install/has do not run code, so they need no trust (as upstream)
    monkeypatch.delenv("KERNELKIT_TRUSTED_PUBLISHERS")
    assert api.has_kernel(repo, version=1, hub=hub)


def test_has_kernel_and_argument_errors(env: dict[str, Any]) -> None:
    hub, tmp = env["hub"], env["tmp"]
    publish(hub, tmp, REPO, "v1", {HOST: dict(uid=uid())})
    publish(hub, tmp, REPO, "v2", {"torch-cuda": dict(uid=uid())})
    assert api.has_kernel(REPO, version=1, hub=hub)
    assert not api.has_kernel(REPO, version=2, hub=hub)
    with pytest.raises(ValueError, match="Version 9 not found, available versions: 1, 2"):
        api.has_kernel(REPO, version=9, hub=hub)
    with pytest.raises(ValueError, match=r"Only one of `revision` or `version` must be specified."):
        api.get_kernel(REPO, revision="v1", version=1, hub=hub)
    with pytest.raises(ValueError, match=r"A kernel version or revision must be specified."):
        api.get_kernel(REPO, hub=hub)
    counting = CountingHub(hub)
    with pytest.raises(InvalidBackendError, match="Invalid backend 'xpu'"):
        api.get_kernel(REPO, version=1, backend="xpu", hub=counting)
    assert counting.calls == []
    ranked = api.get_kernel_variants(REPO, version=2, backend="cpu", hub=hub)
    assert [(d.variant, d.accepted) for d in ranked] == [("torch-cuda", False)]


def test_offline_uses_cached_refs_only(env: dict[str, Any],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    hub, tmp = env["hub"], env["tmp"]
    commit = publish(hub, tmp, REPO, "v1", {HOST: dict(uid=uid())})
    module = api.get_kernel(REPO, version=1, hub=hub)
    monkeypatch.setenv("KERNELKIT_OFFLINE", "1")
    counting = CountingHub(hub)
    assert api.get_kernel(REPO, version=1, hub=counting) is module
    assert api.get_kernel(REPO, revision=commit[:8], hub=counting) is module
    assert counting.calls == []
    with pytest.raises(OfflineError, match="Version 3 not found, available versions: 1"):
        api.get_kernel(REPO, version=3, hub=counting)
    with pytest.raises(OfflineError, match="not in the local cache"):
        api.get_kernel("kernels-community/other", version=1, hub=counting)
    monkeypatch.setenv("KERNELKIT_OFFLINE", "0")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(OfflineError, match="offline mode is on"):
        api.get_kernel(REPO, revision="main", hub=counting)
    assert counting.calls == []


def test_local_kernels_override(env: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    tmp = env["tmp"]
    u = uid()
    make_variant(tmp / "local" / "build", HOST, uid=u, factor=5.0)
    counting = CountingHub(env["hub"])
    monkeypatch.setenv("LOCAL_KERNELS", f"other/x={tmp}/nope:untrusted/demo={tmp / 'local'}")
    module = api.get_kernel("untrusted/demo", version=7, hub=counting)  # no trust, no version
    assert loaded_id(module) == f"_demo_cpu_{u}"
    assert torch.equal(module.scale(torch.ones(2)), torch.full((2,), 5.0))
    assert counting.calls == []
    [entry] = [lk for lk in api.get_loaded_kernels() if lk.module is module]
    assert entry.repo_info is None
    with pytest.raises(FileNotFoundError, match="Could not find kernel in"):
        api.get_kernel("other/x", version=1, hub=counting)
    monkeypatch.setenv("LOCAL_KERNELS", "no-equals-sign")
    with pytest.raises(ValueError, match="Invalid LOCAL_KERNELS entry: no-equals-sign"):
        api.get_kernel("untrusted/demo", version=1, hub=counting)


def test_get_local_kernel_layouts(tmp_path: Path) -> None:
    u = uid()
    root = tmp_path / "snapshot"
    vdir = make_variant(root / "build", HOST, uid=u, factor=4.0)
    make_variant(root / "build", "torch-cuda", uid=uid())
    make_variant(root / "build", "torch212-cxx11-cpu-x86_64-linux", uid=uid())
    (root / "build" / "not-a-variant").mkdir()
    m_root = api.get_local_kernel(root)
    assert loaded_id(m_root) == f"_demo_cpu_{u}"
    assert api.get_local_kernel(root / "build") is m_root
    assert api.get_local_kernel(vdir) is m_root
    assert api.get_local_kernel(str(vdir)) is m_root
    assert torch.equal(m_root.scale(torch.ones(1)), torch.full((1,), 4.0))
    with pytest.raises(FileNotFoundError, match="Could not find kernel in"):
        api.get_local_kernel(tmp_path / "missing")
    only_other = tmp_path / "other"
    make_variant(only_other / "build", "torch-cuda", uid=uid())
    with pytest.raises(VariantNotFoundError, match="torch-cuda: backend"):
        api.get_local_kernel(only_other)


def test_legacy_nested_layout(tmp_path: Path) -> None:
    from kernelkit.artifact.layout import seal_variant
    from kernelkit.artifact.metadata import Metadata

    u = uid()
    vdir = make_variant(tmp_path / "build", HOST, name="nested-demo", uid=u, factor=6.0)
    pkg = vdir / "nested_demo"
    pkg.mkdir()
    for f in ("__init__.py", "_ops.py"):
        shutil.move(str(vdir / f), str(pkg / f))
    seal_variant(vdir, Metadata.read(vdir / "metadata.json"))
    module = api.get_local_kernel(vdir)
    assert loaded_id(module) == f"_nested_demo_cpu_{u}"
    assert torch.equal(module.scale(torch.ones(1)), torch.full((1,), 6.0))


def test_same_id_from_two_paths_is_one_module(env: dict[str, Any]) -> None:
    """The id embeds the source tree hash: a local copy of a hub kernel is the same kernel, and
    importing it again would register its torch ops twice."""
    hub, tmp = env["hub"], env["tmp"]
    build = tmp / "same-id"
    make_variant(build, HOST, uid=(u := uid()))
    commit = publish_dir(hub, REPO, "v1", build)
    from_hub = api.get_kernel(REPO, revision=commit, hub=hub)
    from_disk = api.get_local_kernel(build)
    assert from_disk is from_hub
    entries = [lk for lk in api.get_loaded_kernels() if lk.metadata.id == f"_demo_cpu_{u}"]
    assert sorted(str(lk.repo_info) for lk in entries) == sorted(
        [str(api.RepoInfo(REPO, commit)), "None"])


def test_dirty_provenance_warns_and_still_imports(tmp_path: Path) -> None:
    from kernelkit.artifact.layout import seal_variant
    from kernelkit.artifact.metadata import Commit, Metadata, Provenance

    vdir = make_variant(tmp_path / "build", HOST, uid=uid())
    meta = Metadata.read(vdir / "metadata.json")
    dirty = Provenance(builder_version="kernelkit/0.1.0", kernel=Commit("a" * 40, True))
    seal_variant(vdir, meta.__class__(**{**meta.__dict__, "provenance": dirty}))
    with pytest.warns(UserWarning, match="dirty kernel source checkout"):
        module = api.get_local_kernel(vdir)
    assert torch.equal(module.scale(torch.ones(1)), torch.full((1,), 2.0))
