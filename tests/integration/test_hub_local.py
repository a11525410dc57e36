"""LocalGitHub against real bare git repositories in a temporary directory."""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

import pytest

from kernelkit.errors import HubError, RevisionNotFoundError
from kernelkit.hub.local import LocalGitHub
from kernelkit.hub.port import Hub
from tests.helpers import hub_git

REPO = "acme/demo"



def files_of(tmp: Path, contents: dict[str, bytes]) -> dict[str, Path]:
    out = {}
    for i, (repo_path, data) in enumerate(contents.items()):
        p = tmp / "src" / f"{i}-{hashlib.sha1(repo_path.encode()).hexdigest()[:8]}"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
        out[repo_path] = p
    return out


def test_is_a_hub(hub: LocalGitHub) -> None:
    assert isinstance(hub, Hub)


def test_two_versions_tags_and_resolution(hub: LocalGitHub, tmp_path: Path) -> None:
    c1 = hub.publish(REPO, "v1", files_of(tmp_path, {"build/torch-cpu/a.py": b"one"}))
    c2 = hub.publish(REPO, "v2", files_of(tmp_path, {"build/torch-cpu/a.py": b"two"}))
    hub.tag(REPO, "v1.0.0", c1)
    refs = hub.list_refs(REPO)
    assert refs.branches == {"v1": c1, "v2": c2} and refs.tags == {"v1.0.0": c1}
    # The repository is a real git repository: git itself agrees.
    assert hub_git(hub, REPO, "rev-parse", "v2").strip() == c2
    assert hub_git(hub, REPO, "show", "v1:build/torch-cpu/a.py") == "one"
    for rev, want in (("v1", c1), ("v2", c2), ("v1.0.0", c1), (c2, c2), (c1[:7], c1), (c2[:4], c2)):
        assert hub.resolve(REPO, rev) == want


def test_resolve_is_one_git_process(hub: LocalGitHub, tmp_path: Path) -> None:
    c1 = hub.publish(REPO, "v1", files_of(tmp_path, {"a": b"a"}))
    before = hub.git_calls
    assert hub.resolve(REPO, "v1") == c1
    assert hub.git_calls - before == 1
    hub.list_files(REPO, c1)
    hub.list_files(REPO, c1, "build")  # served from the per-commit cache
    hub.list_dirs(REPO, c1)
    assert hub.git_calls - before == 2


def test_errors_name_what_exists(hub: LocalGitHub, tmp_path: Path) -> None:
    with pytest.raises(HubError, match="acme/demo not found") as exc:
        hub.list_refs(REPO)
    assert "kernelkit upload" in str(exc.value)
    assert not hub.repo_exists(REPO)
    hub.publish(REPO, "v1", files_of(tmp_path, {"a": b"a"}))
    assert hub.repo_exists(REPO)
    for bad in ("v3", "deadbeef", "HEAD~1", "v1:a", "--help"):
        with pytest.raises(RevisionNotFoundError) as err:
            hub.resolve(REPO, bad)
        assert err.value.available == ["v1"]
    assert "available: v1" in str(err.value)


def test_list_files_and_fetch_round_trip_bytes(hub: LocalGitHub, tmp_path: Path) -> None:
    contents = {
        "build/torch-cpu/__init__.py": b"print('hi')\n",
        "build/torch-cpu/_lib.so": bytes(range(256)) * 4096 + b"\n\0tail",
        "build/torch-cu130/x/y.json": b"{}",
        "build/torch-cu130/empty": b"",
        "README.md": b"# demo\n",
    }
    commit = hub.publish(REPO, "v1", files_of(tmp_path, contents))
    listed = {e.path: e for e in hub.list_files(REPO, commit)}
    assert set(listed) == set(contents)
    for path, data in contents.items():
        assert listed[path].size == len(data)
        assert listed[path].blob_id == hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
    assert [e.path for e in hub.list_files(REPO, commit, "build/torch-cpu")] == [
        "build/torch-cpu/__init__.py", "build/torch-cpu/_lib.so"]
    assert hub.list_files(REPO, commit, "build/torch-c") == []
    assert hub.list_dirs(REPO, commit) == ["torch-cpu", "torch-cu130"]
    assert hub.list_dirs(REPO, commit, "build/torch-cu130") == ["x"]
    assert hub.list_dirs(REPO, commit, "nope") == []
    dest = tmp_path / "out"
    hub.fetch(REPO, commit, sorted(contents), dest)
    for path, data in contents.items():
        assert (dest / path).read_bytes() == data
    assert hub.read_file(REPO, commit, "README.md") == b"# demo\n"
    assert hub.read_file(REPO, commit, "missing.toml") is None
    with pytest.raises(HubError, match=r"nope.py does not exist at commit"):
        hub.fetch(REPO, commit, ["README.md", "nope.py"], tmp_path / "out2")


def test_delete_prefixes_and_no_op(hub: LocalGitHub, tmp_path: Path) -> None:
    first = files_of(tmp_path, {"build/a/old.py": b"1", "build/a/keep.py": b"k", "build/b/x": b"x"})
    c1 = hub.publish(REPO, "v1", first)
    c2 = hub.publish(REPO, "v1", files_of(tmp_path, {"build/a/keep.py": b"k2"}),
                     delete_prefixes=("build/a/",))
    assert [e.path for e in hub.list_files(REPO, c2)] == ["build/a/keep.py", "build/b/x"]
    assert hub_git(hub, REPO, "rev-parse", f"{c2}^").strip() == c1
    # Same content again: no new commit, the branch does not move.
    again = hub.publish(REPO, "v1", files_of(tmp_path, {"build/a/keep.py": b"k2"}),
                        delete_prefixes=("build/a/",))
    assert again == c2 and hub.resolve(REPO, "v1") == c2
    assert hub_git(hub, REPO, "rev-list", "--count", "v1").strip() == "2"


def test_file_directory_clash_is_refused(hub: LocalGitHub, tmp_path: Path) -> None:
    hub.publish(REPO, "v1", files_of(tmp_path, {"build/a": b"file"}))
    with pytest.raises(HubError, match="both a file and a directory"):
        hub.publish(REPO, "v1", files_of(tmp_path, {"build/a/b": b"x"}))


def test_tags_never_move(hub: LocalGitHub, tmp_path: Path) -> None:
    c1 = hub.publish(REPO, "v1", files_of(tmp_path, {"a": b"1"}))
    c2 = hub.publish(REPO, "v1", files_of(tmp_path, {"a": b"2"}))
    hub.tag(REPO, "v1.0.0", c1[:8])
    hub.tag(REPO, "v1.0.0", c1)  # same commit: fine
    with pytest.raises(HubError, match="tags never move"):
        hub.tag(REPO, "v1.0.0", c2)
    assert hub.resolve(REPO, "v1.0.0") == c1
    with pytest.raises(HubError, match="invalid tag name"):
        hub.tag(REPO, "v1..0", c2)


def test_compare_and_swap_loses_cleanly(hub: LocalGitHub, tmp_path: Path) -> None:
    """A publisher whose branch moved after it read it cannot overwrite the other's commit."""
    c1 = hub.publish(REPO, "v1", files_of(tmp_path, {"a": b"1"}))
    repo = hub.repo(REPO)
    old, mine = hub.build_commit(repo, "v1", files_of(tmp_path, {"mine": b"m"}), (), "mine")
    assert old == c1
    theirs = hub.publish(REPO, "v1", files_of(tmp_path, {"theirs": b"t"}))
    why = repo.update_ref("refs/heads/v1", mine, old)
    assert why is not None and "expected" in why
    assert hub.resolve(REPO, "v1") == theirs


def test_concurrent_publishers_never_lose_updates(hub: LocalGitHub, tmp_path: Path) -> None:
    hub.publish(REPO, "v1", files_of(tmp_path, {"base": b"0"}))
    won: list[str] = []
    lost: list[str] = []
    messages: list[str] = []

    def worker(i: int) -> None:
        h = LocalGitHub(hub.root)  # one hub object per publisher, like separate processes
        try:
            won.append(h.publish(REPO, "v1", files_of(tmp_path / str(i), {f"f{i}": b"%d" % i})))
        except HubError as exc:
            lost.append(str(i))
            messages.append(str(exc))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(won) + len(lost) == 6 and won
    assert all("lost a race" in m and "run the upload again" in m for m in messages)
    history = hub_git(hub, REPO, "rev-list", "v1").split()
    assert set(won) <= set(history) and len(history) == len(won) + 1
    names = {e.path for e in hub.list_files(REPO, hub.resolve(REPO, "v1"))}
    assert names == {"base"} | {f"f{c}" for c in range(6) if str(c) not in lost}
