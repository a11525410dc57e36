"""Version specifiers and offline lookups through the public loader, on real local git hubs.

Online, ``version="<specifier>"`` picks the newest matching release tag; every ``list_refs``
records all refs in the cache. Offline (``HF_HUB_OFFLINE=1`` / ``KERNELKIT_OFFLINE=1``, the hub
pointed at a directory that does not exist) versions, specifiers, branches and tags resolve from
those refs alone, after an online load or after ``kernelkit download``.
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from kernelkit.errors import OfflineError, VersionNotFoundError  # noqa: E402
from kernelkit.hub.local import LocalGitHub  # noqa: E402
from kernelkit.loader import api  # noqa: E402
from kernelkit.loader.cache import RepoCache  # noqa: E402
from kernelkit.variants.host import detect_system  # noqa: E402
from tests.helpers import make_variant  # noqa: E402

HOST = detect_system().arch_variant() or "torch-cpu"
OFFLINE_VARS = ("HF_HUB_OFFLINE", "KERNELKIT_OFFLINE")
# tag -> factor of the kernel published under it (each on its own commit of branch v1/v2)
RELEASES = {"v1.0.0": 1.0, "v1.1.0": 1.1, "v1.2.3": 1.23, "v2.0.0": 2.0, "v2.1.0rc1": 2.1}


def publish_release(hub: LocalGitHub, tmp: Path, repo: str, tag: str, factor: float) -> str:
    uid = uuid.uuid4().hex[:7]
    build = tmp / f"build-{uid}"
    vdir = make_variant(build, HOST, name="demo", uid=uid, factor=factor, tag=tag,
                        version=int(tag[1]))
    files = {f"build/{HOST}/{p.relative_to(vdir).as_posix()}": p
             for p in sorted(vdir.rglob("*")) if p.is_file()}
    commit = hub.publish(repo, f"v{tag[1]}", files, delete_prefixes=("build/",))
    hub.tag(repo, tag, commit)
    return commit


@pytest.fixture
def released(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """A hub with the RELEASES of a fresh repository (its branch ``main`` = ``v1.1.0``)."""
    for var in ("LOCAL_KERNELS", *OFFLINE_VARS, "KERNELKIT_TRUSTED_PUBLISHERS"):
        monkeypatch.delenv(var, raising=False)
    repo = f"kernels-community/v{uuid.uuid4().hex[:8]}"
    hub = LocalGitHub(tmp_path / "hub")
    commits = {tag: publish_release(hub, tmp_path, repo, tag, f) for tag, f in RELEASES.items()}
    hub.publish(repo, "main", {"README.md": _readme(tmp_path)})
    main = hub.resolve(repo, "main")
    hub.tag(repo, "v1.1.0-main", main)  # a non-release tag on a commit without build/
    cache = tmp_path / "cache"
    monkeypatch.setenv("KERNELKIT_CACHE", str(cache))
    monkeypatch.setenv("KERNELKIT_HUB", str(hub.root))
    return {"hub": hub, "repo": repo, "commits": commits, "cache": cache, "tmp": tmp_path}


def _readme(tmp: Path) -> Path:
    path = tmp / "README.md"
    path.write_text("demo\n")
    return path


def factor_of(module: Any) -> float:
    return float(module.scale(torch.ones(1)).item())


def go_offline(monkeypatch: pytest.MonkeyPatch, tmp: Path, var: str) -> Path:
    """Offline mode, with the hub moved away: the configured hub (KERNELKIT_HUB, which keys the
    cache) stays the same, but any attempt to reach it would fail or recreate its directory."""
    gone = tmp / "hub"
    gone.rename(tmp / "hub-moved-away")
    monkeypatch.setenv("KERNELKIT_HUB", str(gone))
    monkeypatch.setenv(var, "1")
    return gone


@pytest.mark.parametrize(("spec", "tag"), [
    (">=1.1,<2", "v1.2.3"),
    ("~=1.1", "v1.2.3"),  # >=1.1, ==1.*
    ("~=1.1.0", "v1.1.0"),  # >=1.1.0, ==1.1.*
    ("==1.0.*", "v1.0.0"),
    ("<1.2", "v1.1.0"),
    (">=1", "v2.0.0"),  # pre-releases only when asked for
    (">=2.1.0rc1", "v2.1.0rc1"),
])
def test_specifier_picks_newest_matching_release(released: dict[str, Any], spec: str,
                                                 tag: str) -> None:
    repo, commits = released["repo"], released["commits"]
    module = api.get_kernel(repo, version=spec)
    assert tag == module.VERSION_TAG
    assert factor_of(module) == pytest.approx(RELEASES[tag])
    assert api.install_kernel(repo, version=spec).parent.parent.name == commits[tag]
    assert api.has_kernel(repo, version=spec)
    decisions = api.get_kernel_variants(repo, version=spec)
    assert [(d.variant, d.accepted) for d in decisions] == [(HOST, True)]


def test_specifier_without_match_lists_releases(released: dict[str, Any]) -> None:
    with pytest.raises(VersionNotFoundError) as info:
        api.get_kernel(released["repo"], version=">=3")
    assert isinstance(info.value, ValueError)
    assert "matches version specifier '>=3'" in str(info.value)
    assert "v1.0.0, v1.1.0, v1.2.3, v2.0.0, v2.1.0rc1" in str(info.value)
    with pytest.raises(ValueError, match="neither a major version"):
        api.get_kernel(released["repo"], version="latest please")


def test_one_list_refs_records_every_ref(released: dict[str, Any]) -> None:
    hub, repo = released["hub"], released["repo"]
    api.get_kernel(repo, version=1)
    refs = hub.list_refs(repo)
    rc = RepoCache.of(released["cache"], repo, hub.hub_identity)
    assert (rc.refs("heads"), rc.refs("tags")) == (refs.branches, refs.tags)
    recorded = {**rc.refs("heads"), **rc.refs("tags")}
    assert {"main", "v1", "v2", "v1.1.0-main", *RELEASES} <= set(recorded)


@pytest.mark.parametrize("var", OFFLINE_VARS)
def test_offline_after_online_load(released: dict[str, Any], monkeypatch: pytest.MonkeyPatch,
                                   var: str) -> None:
    repo, commits = released["repo"], released["commits"]
    # online: two loads; v1.1.0 only ever by a specifier, v1.2.3 (= branch v1) by version=1
    by_spec = api.get_kernel(repo, version="~=1.1.0")
    by_major = api.get_kernel(repo, version=1)
    gone = go_offline(monkeypatch, released["tmp"], var)
    assert api.get_kernel(repo, version=1) is by_major
    assert api.get_kernel(repo, version="1") is by_major
    assert api.get_kernel(repo, version=">=1.1,<2") is by_major  # newest cached match
    assert api.get_kernel(repo, version="==1.1.*") is by_spec
    assert api.get_kernel(repo, revision="v1") is by_major  # branch, recorded by list_refs
    assert api.get_kernel(repo, revision="v1.1.0") is by_spec  # tag, never loaded by name
    assert api.get_kernel(repo, revision=commits["v1.1.0"][:7]) is by_spec  # short id
    assert api.has_kernel(repo, version="~=1.2")
    with pytest.raises(OfflineError) as info:  # v2.0.0 exists but was never downloaded
        api.get_kernel(repo, version=2)
    assert "version 2 of " + repo in str(info.value)
    assert f'kernelkit.get_kernel("{repo}", version=2)' in str(info.value)
    assert not gone.exists()


@pytest.mark.parametrize("var", OFFLINE_VARS)
def test_offline_after_kernelkit_download(released: dict[str, Any],
                                          monkeypatch: pytest.MonkeyPatch, var: str) -> None:
    hub, repo, commits, tmp = (released[k] for k in ("hub", "repo", "commits", "tmp"))
    proj = tmp / "app"
    proj.mkdir()
    (proj / "pyproject.toml").write_text(
        f'[project]\nname = "app"\n\n[tool.kernels.dependencies]\n"{repo}" = 1\n')
    dest = tmp / "air-gapped"
    for args in (["lock", str(proj)], ["download", str(proj), "--dest", str(dest)]):
        out = subprocess.run([sys.executable, "-m", "kernelkit", *args, "--hub", str(hub.root)],
                             capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
    # nothing was downloaded into the default cache (`lock` resolves through the loader, so
    # it may record the refs it listed there)
    assert not list(released["cache"].glob("*/*/build"))
    gone = go_offline(monkeypatch, tmp, var)
    monkeypatch.setenv("KERNELKIT_CACHE", str(dest))
    module = api.get_kernel(repo, version=1)
    assert module.VERSION_TAG == "v1.2.3"
    assert api.get_kernel(repo, version=">=1.0,<2") is module
    assert api.get_kernel(repo, revision="v1") is module
    assert api.get_kernel(repo, revision="v1.2.3") is module
    assert api.get_kernel(repo, revision=commits["v1.2.3"]) is module
    with pytest.raises(OfflineError, match=r"version '~=1.1.0' of"):  # v1.1.0 was not downloaded
        api.get_kernel(repo, version="~=1.1.0")
    assert not gone.exists()


@pytest.mark.parametrize(("kwargs", "asked"), [
    ({"version": 1}, "version 1 of"),
    ({"version": ">=1.1,<2"}, "version '>=1.1,<2' of"),
    ({"revision": "main"}, "revision 'main' of"),
    ({"revision": "v1.2.3"}, "revision 'v1.2.3' of"),
])
def test_offline_with_nothing_cached_says_what_is_missing(
        released: dict[str, Any], monkeypatch: pytest.MonkeyPatch, kwargs: dict[str, Any],
        asked: str) -> None:
    repo = released["repo"]
    gone = go_offline(monkeypatch, released["tmp"], "HF_HUB_OFFLINE")
    with pytest.raises(OfflineError) as info:
        api.get_kernel(repo, **kwargs)
    text = str(info.value)
    assert f"{asked} {repo} is not in the local cache" in text
    assert "cached refs of this hub: none" in text
    (key, value), = kwargs.items()
    shown = value if isinstance(value, int) else f'"{value}"'
    assert f'kernelkit.get_kernel("{repo}", {key}={shown})' in text
    assert "kernelkit download <project>" in text
    assert not gone.exists()


def test_offline_full_commit_not_cached_names_the_command(
        released: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    repo, commit = released["repo"], released["commits"]["v1.0.0"]
    go_offline(monkeypatch, released["tmp"], "KERNELKIT_OFFLINE")
    with pytest.raises(OfflineError) as info:
        api.get_kernel(repo, revision=commit)
    assert f"'{repo}' at {commit} is not in the local cache" in str(info.value)
    assert f'kernelkit.get_kernel("{repo}", revision="{commit}")' in str(info.value)
