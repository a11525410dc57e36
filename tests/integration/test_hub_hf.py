"""kernelkit's Hugging Face backend (``HuggingFaceHub`` through the real ``huggingface_hub``)
against a real ``kernelkit serve`` on a loopback port.

This replaces the loopback test double that used to live here: the server is kernelkit's own
product, and its repositories are the local hub's bare git repositories, so every answer is
cross-checked against ``LocalGitHub`` reading the same directory. What the public Hub does
beyond the API subset is not verified here (see docs/serve.md).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kernelkit.errors import HubError, RevisionNotFoundError
from kernelkit.hub import open_hub
from kernelkit.hub.hf import HuggingFaceHub
from kernelkit.hub.local import LocalGitHub
from kernelkit.publish.upload import upload
from tests.helpers import make_variant
from tests.hubserver import READ_TOKEN, WRITE_TOKEN, HubServer, run_server

pytest.importorskip("huggingface_hub")
pytest.importorskip("uvicorn")

REPO = "acme/demo"
CPU = "torch213-cxx11-cpu-x86_64-linux"


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HubServer]:
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    with run_server(tmp_path / "hub", tmp_path, "--page-size", "3") as srv:
        yield srv


def test_upload_and_read_through_huggingface_hub(server: HubServer, tmp_path: Path) -> None:
    store = LocalGitHub(server.hub_dir)
    hub = open_hub("hf", env={"HF_ENDPOINT": server.url, "HF_TOKEN": WRITE_TOKEN})
    assert isinstance(hub, HuggingFaceHub) and not hub.repo_exists(REPO)
    build = tmp_path / "p" / "build"
    make_variant(build, CPU)
    make_variant(build, "torch-cpu")
    result = upload(build, hub, repo_id=REPO, tag="v1.0.0")
    assert result.changed and store.resolve(REPO, "v1") == result.commit
    assert store.resolve(REPO, "v1.0.0") == result.commit
    assert hub.list_refs(REPO).branches["v1"] == result.commit
    assert hub.resolve(REPO, "v1.0.0") == result.commit
    assert hub.resolve(REPO, result.commit[:10]) == result.commit
    assert hub.list_dirs(REPO, result.commit) == sorted([CPU, "torch-cpu"])
    # a recursive listing longer than a page (--page-size 3) comes back whole
    entries = {e.path: e for e in hub.list_files(REPO, result.commit, "build")}
    local = {e.path: e for e in store.list_files(REPO, result.commit, "build")}
    assert entries == local and len(entries) > 3
    paths = sorted(entries)
    hub.fetch(REPO, result.commit, paths, tmp_path / "out")
    for p in paths:
        assert (tmp_path / "out" / p).read_bytes() == (build.parent / p).read_bytes()
    assert hub.read_file(REPO, result.commit, f"build/{CPU}/_ops.py") == \
        (build / CPU / "_ops.py").read_bytes()
    assert hub.read_file(REPO, result.commit, "kernel-status.toml") is None
    # Same tree again: no commit; a tag never moves.
    assert not upload(build, hub, repo_id=REPO).changed
    (build / CPU / "extra.py").write_text("")
    (build / CPU / "metadata.json").unlink()
    make_variant(build, CPU, factor=4.0)
    second = upload(build, hub, repo_id=REPO)
    assert second.changed and store.resolve(REPO, "v1") == second.commit
    assert store.read_file(REPO, second.commit, f"build/{CPU}/extra.py") == b""
    with pytest.raises(HubError, match="tags never move"):
        hub.tag(REPO, "v1.0.0", second.commit)
    with pytest.raises(RevisionNotFoundError):
        hub.resolve(REPO, "v9")
    with pytest.raises(HubError, match="not found"):
        hub.list_refs("acme/missing")


def test_stale_parent_commit_is_rejected(server: HubServer, tmp_path: Path) -> None:
    store = LocalGitHub(server.hub_dir)
    hub = HuggingFaceHub(token=WRITE_TOKEN, endpoint=server.url)
    (tmp_path / "a").write_text("a")
    first = hub.publish(REPO, "v1", {"a": tmp_path / "a"})
    moved = store.publish(REPO, "v1", {"b": tmp_path / "a"})  # someone else moves the branch
    from huggingface_hub import CommitOperationAdd

    with pytest.raises(HubError), hub._errors(REPO, "v1"):
        hub.api.create_commit(REPO, [CommitOperationAdd("c", str(tmp_path / "a"))],
                              commit_message="m", repo_type="kernel", revision="v1",
                              parent_commit=first)
    assert store.resolve(REPO, "v1") == moved
    assert store.read_file(REPO, moved, "c") is None


def test_pull_requests_and_private_repositories(server: HubServer, tmp_path: Path) -> None:
    store = LocalGitHub(server.hub_dir)
    hub = HuggingFaceHub(token=WRITE_TOKEN, endpoint=server.url, private=True)
    build = tmp_path / "p" / "build"
    make_variant(build, CPU)
    first = upload(build, hub, repo_id=REPO)
    make_variant(build, CPU, factor=3.0)
    pr = upload(build, hub, repo_id=REPO, create_pr=True)
    # the branch did not move; the change waits in refs/pr/1
    assert store.resolve(REPO, "v1") == first.commit
    assert pr.changed and pr.pull_requests[0][0] == "v1"
    assert pr.pull_requests[0][1] == f"{server.url}/kernels/{REPO}/discussions/1"
    refs = hub.api.list_repo_refs(REPO, repo_type="kernel", include_pull_requests=True)
    assert [(r.ref, r.target_commit) for r in refs.pull_requests] == [("refs/pr/1", pr.commit)]
    assert hub.resolve(REPO, "refs/pr/1") == pr.commit
    assert store.repo(REPO).lookup([f"{pr.commit}^"])[0][0] == first.commit  # type: ignore[index]
    with pytest.raises(HubError, match="--tag cannot be used with --create-pr"):
        upload(build, hub, repo_id=REPO, create_pr=True, tag="v1.1.0")
    with pytest.raises(HubError, match="has no pull requests"):
        upload(build, store, repo_id=REPO, create_pr=True)
    # private: invisible without a token, readable with a read token
    assert not HuggingFaceHub(endpoint=server.url).repo_exists(REPO)
    assert HuggingFaceHub(token=READ_TOKEN, endpoint=server.url).resolve(REPO, "v1") == \
        first.commit
    with pytest.raises(HubError, match=r"refused|not found"):
        HuggingFaceHub(token=READ_TOKEN, endpoint=server.url).tag(REPO, "v1.0.0", first.commit)
    assert store.list_refs(REPO).tags == {}
