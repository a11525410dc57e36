"""GitRemoteHub against a real git remote over file:// (a bare repository made in tmp)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from kernelkit.errors import HubError, RevisionNotFoundError
from kernelkit.hub import open_hub
from kernelkit.hub.git_remote import GitRemoteHub
from kernelkit.hub.local import LocalGitHub
from kernelkit.hub.port import Hub
from kernelkit.publish.upload import upload
from tests.helpers import make_variant

REPO = "acme/demo"


def one_file(tmp: Path, name: str, data: bytes) -> dict[str, Path]:
    p = tmp / "src" / name.replace("/", "_")
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data)
    return {name: p}


def remote_git(remote_root: Path, *args: str) -> str:
    return subprocess.run(["git", f"--git-dir={remote_root / 'acme' / 'demo.git'}", *args],
                          check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def remote_root(tmp_path: Path) -> Path:
    return tmp_path / "remote"


def test_publish_and_read_back_through_another_clone(tmp_path: Path, remote_root: Path) -> None:
    url = f"git+file://{remote_root}"
    a = GitRemoteHub(url, tmp_path / "cache-a")
    assert isinstance(a, Hub) and not a.repo_exists(REPO)
    c1 = a.publish(REPO, "v1", one_file(tmp_path, "build/torch-cpu/a.py", b"one"))
    a.tag(REPO, "v1.0.0", c1)
    # The remote itself holds the commit and the tag.
    assert remote_git(remote_root, "rev-parse", "v1") == c1
    assert remote_git(remote_root, "rev-parse", "v1.0.0^{commit}") == c1
    b = GitRemoteHub(url, tmp_path / "cache-b", max_age=0)
    assert b.list_refs(REPO).branches == {"v1": c1}
    assert b.resolve(REPO, "v1.0.0") == c1 and b.resolve(REPO, c1[:7]) == c1
    assert b.list_dirs(REPO, c1) == ["torch-cpu"]
    b.fetch(REPO, c1, ["build/torch-cpu/a.py"], tmp_path / "out")
    assert (tmp_path / "out/build/torch-cpu/a.py").read_bytes() == b"one"
    assert b.read_file(REPO, c1, "build/torch-cpu/a.py") == b"one"
    # A second publisher sees the first one's work and builds on it.
    c2 = b.publish(REPO, "v1", one_file(tmp_path, "build/torch-cpu/b.py", b"two"))
    assert remote_git(remote_root, "rev-parse", f"{c2}^") == c1
    assert {e.path for e in a.list_files(REPO, c2)} == {"build/torch-cpu/a.py",
                                                        "build/torch-cpu/b.py"}
    with pytest.raises(RevisionNotFoundError):
        b.resolve(REPO, "v7")
    with pytest.raises(HubError, match="tags never move"):
        b.tag(REPO, "v1.0.0", c2)


def test_known_commit_needs_no_fetch(tmp_path: Path, remote_root: Path) -> None:
    hub = GitRemoteHub(f"git+file://{remote_root}", tmp_path / "cache")
    c1 = hub.publish(REPO, "v1", one_file(tmp_path, "a", b"1"))
    before = hub.git_calls
    assert hub.resolve(REPO, c1) == c1
    hub.list_files(REPO, c1)
    assert hub.git_calls - before == 3  # lookup, lookup, ls-tree: all local, no git fetch


def test_remote_compare_and_swap(tmp_path: Path, remote_root: Path) -> None:
    """A commit prepared on a stale view of the branch is rejected by the remote."""
    url = f"git+file://{remote_root}"
    a = GitRemoteHub(url, tmp_path / "cache-a")
    b = GitRemoteHub(url, tmp_path / "cache-b")
    c1 = a.publish(REPO, "v1", one_file(tmp_path, "a", b"1"))
    repo_a = a.refresh(REPO, force=True)
    old, mine = a.mirror.build_commit(repo_a, "v1", one_file(tmp_path, "mine", b"m"), (), "m")
    theirs = b.publish(REPO, "v1", one_file(tmp_path, "theirs", b"t"))
    assert old == c1
    with pytest.raises(HubError, match="rejected"):
        a._push(REPO, repo_a, [f"{mine}:refs/heads/v1"], f"--force-with-lease=refs/heads/v1:{old}",
                what="branch v1")
    assert remote_git(remote_root, "rev-parse", "v1") == theirs


def test_unreachable_remote_is_a_hub_error(tmp_path: Path) -> None:
    hub = GitRemoteHub(f"git+file://{tmp_path}/nowhere", tmp_path / "cache")
    with pytest.raises(HubError, match="cannot read kernel repository acme/demo"):
        hub.list_refs(REPO)


def test_upload_to_a_git_remote(tmp_path: Path, remote_root: Path) -> None:
    build = tmp_path / "proj" / "build"
    make_variant(build, "torch213-cxx11-cpu-x86_64-linux")
    env = {"KERNELKIT_CACHE": str(tmp_path / "cache")}
    hub = open_hub(f"git+file://{remote_root}", env=env)
    result = upload(build, hub, repo_id=REPO, tag="v1.0.0")
    assert result.changed and result.branch == "v1"
    # Anyone can clone it with plain git and read it as a local hub.
    subprocess.run(["git", "clone", "-q", "--mirror", str(remote_root / "acme" / "demo.git"),
                    str(tmp_path / "clone" / "acme" / "demo.git")], check=True)
    local = LocalGitHub(tmp_path / "clone")
    assert local.resolve(REPO, "v1.0.0") == result.commit
    assert local.list_dirs(REPO, result.commit) == ["torch213-cxx11-cpu-x86_64-linux"]


# --- download progress: the network bytes move in git fetch --------------------------------


def test_get_kernel_shows_the_git_fetch_as_it_arrives(tmp_path: Path, remote_root: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The hub from ``KERNELKIT_HUB`` gets the loader's fetch observer: git's own "Receiving
    objects" lines (a kept pack's index-pack prints them, bytes included) reach the progress
    reporter while the fetch runs, before any variant's size is known; the mirror keeps what
    arrived as one pack."""
    import os

    from kernelkit.artifact.layout import seal_variant
    from kernelkit.artifact.metadata import Metadata
    from kernelkit.loader import api
    from kernelkit.loader.progress import DownloadStatus, use_progress_reporter
    from kernelkit.variants.host import detect_system

    host = detect_system().arch_variant() or "torch-cpu"
    vdir = make_variant(tmp_path / "build", host)
    (vdir / "weights.bin").write_bytes(os.urandom(20 << 20))
    seal_variant(vdir, Metadata.read(vdir / "metadata.json"))
    files = {f"build/{host}/{p.relative_to(vdir).as_posix()}": p
             for p in sorted(vdir.rglob("*")) if p.is_file()}
    url = f"git+file://{remote_root}"
    GitRemoteHub(url, tmp_path / "publisher").publish(REPO, "main", files)

    monkeypatch.setenv("KERNELKIT_HUB", url)
    monkeypatch.setenv("KERNELKIT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("KERNELKIT_PROGRESS_MIN_BYTES", "0")
    seen: list[DownloadStatus] = []
    with use_progress_reporter(seen.append):
        path = api.install_kernel(REPO, revision="main")
    assert (path / "weights.bin").stat().st_size == 20 << 20
    fetch = [s for s in seen if s.label == f"{REPO} (git fetch)"]
    assert fetch and fetch[-1].finished and not fetch[-1].failed
    assert all(s.total_bytes is None for s in fetch[:-1])  # git learns the size as it arrives
    assert fetch[-1].total_bytes is not None and fetch[-1].total_bytes >= 20 << 20
    assert "receiving objects" in {s.step[0] for s in fetch if s.step}
    # then the variant itself comes out of the mirror, with its listed size
    assert seen[-1].label.startswith(f"{REPO}@") and seen[-1].finished
    mirror = next((tmp_path / "cache").rglob("demo.git"))
    assert list((mirror / "objects" / "pack").glob("*.pack"))
    assert not [d for d in (mirror / "objects").iterdir() if len(d.name) == 2]  # no loose


def test_a_failing_fetch_with_an_observer_says_what_git_said(tmp_path: Path) -> None:
    from kernelkit.hub.git_remote import FetchStatus

    hub = GitRemoteHub(f"git+file://{tmp_path / 'nowhere'}", tmp_path / "cache")
    seen: list[FetchStatus] = []
    hub.fetch_observer = seen.append
    with pytest.raises(HubError, match=r"(?s)cannot read kernel repository acme/demo.*"
                                       r"does not appear to be a git repository"):
        hub.list_refs(REPO)
    assert seen == []  # nothing was received, so nothing was shown
