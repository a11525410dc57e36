"""``kernelkit cache ls|rm|prune`` against a real cache filled by real loads from real local git
hubs; removals racing a real download in another process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from kernelkit.errors import ExitCode
from kernelkit.hub.local import LocalGitHub
from kernelkit.loader import api
from kernelkit.loader.cache_admin import tree_size
from kernelkit.variants.host import detect_system
from tests.helpers import make_variant, publish_build, run_cli

HOST = detect_system().arch_variant() or "torch-cpu"
REPO = "kernels-community/demo"


def kernelkit(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The real CLI in this process (tests/helpers.py ``run_cli``): every call names its
    cache with --cache-dir, so ``env`` is not needed."""
    return run_cli(*args)


def publish(hub: LocalGitHub, tmp: Path, branch: str = "v1", factor: float = 2.0) -> str:
    build = tmp / f"build-{uuid.uuid4().hex[:8]}"
    make_variant(build, HOST, uid=uuid.uuid4().hex[:7], factor=factor)
    make_variant(build, "torch-cuda", uid=uuid.uuid4().hex[:7], factor=factor)
    return publish_build(hub, REPO, branch, build)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Two hubs serving the same repository id; from hub A, v1 was loaded, then v1 moved on
    and was installed again (the first commit is now detached); from hub B, v1 once."""
    cache_dir = tmp_path / "cache"
    monkeypatch.setenv("KERNELKIT_CACHE", str(cache_dir))
    a, b = LocalGitHub(tmp_path / "hub-a"), LocalGitHub(tmp_path / "hub-b")
    old = publish(a, tmp_path)
    api.install_kernel(REPO, version=1, hub=a)
    new = publish(a, tmp_path, factor=3.0)
    api.install_kernel(REPO, version=1, hub=a)
    other = publish(b, tmp_path, factor=4.0)
    api.install_kernel(REPO, version=1, hub=b)
    return {"dir": cache_dir, "a": a, "b": b, "old": old, "new": new, "other": other,
            "tmp": tmp_path}


def ls(cache_dir: Path) -> dict[str, Any]:
    out = kernelkit("cache", "ls", "--json", "--cache-dir", str(cache_dir))
    assert out.returncode == 0, out.stderr
    return dict(json.loads(out.stdout))


def test_ls_lists_hub_revision_variant_and_sizes(cache: dict[str, Any]) -> None:
    data = ls(cache["dir"])
    repos = {r["hub"]: r for r in data["repos"]}
    assert sorted(repos) == sorted([cache["a"].hub_identity, cache["b"].hub_identity])
    a = repos[cache["a"].hub_identity]
    assert a["repo_id"] == REPO
    revisions = {r["commit"]: r for r in a["revisions"]}
    assert set(revisions) == {cache["old"], cache["new"]}
    assert revisions[cache["new"]]["refs"] == ["v1"] and revisions[cache["old"]]["refs"] == []
    [variant] = revisions[cache["new"]]["variants"]  # only this machine's variant was fetched
    folder = Path(a["folder"])
    vdir = folder / cache["new"] / "build" / HOST
    assert variant == {"variant": HOST, "verified": True, "built_locally": False,
                       "size": sum(p.stat().st_size for p in vdir.rglob("*") if p.is_file())}
    assert a["size"] == tree_size(folder) and data["size"] == sum(
        r["size"] for r in data["repos"])

    human = kernelkit("cache", "ls", "--cache-dir", str(cache["dir"]))
    assert human.returncode == 0
    lines = human.stdout.splitlines()
    assert lines[0].split() == ["REPO", "HUB", "REVISION", "VARIANT", "SIZE"]
    assert any(f"v1 ({cache['new'][:12]})" in line and HOST in line for line in lines)
    assert any(f"{cache['old'][:12]} (detached)" in line for line in lines)


def test_rm_a_variant_a_revision_a_hub_copy(cache: dict[str, Any]) -> None:
    d = str(cache["dir"])
    out = kernelkit("cache", "rm", REPO, "--revision", cache["old"][:8], "--variant", HOST,
                    "--cache-dir", d, "--json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert [(r["what"], r["commit"], r["variant"]) for r in result["removed"]] == [
        ("variant", cache["old"], HOST)]
    assert result["freed"] == result["removed"][0]["size"] > 0
    remaining = {(r["hub"], rev["commit"], tuple(v["variant"] for v in rev["variants"]))
                 for r in ls(cache["dir"])["repos"] for rev in r["revisions"]}
    assert (cache["a"].hub_identity, cache["old"], ()) in remaining

    # by branch name, from one hub only
    out = kernelkit("cache", "rm", REPO, "--revision", "v1", "--hub", str(cache["tmp"] / "hub-b"),
                    "--cache-dir", d)
    assert out.returncode == 0, out.stderr
    assert f"Removed {REPO}@{cache['other'][:12]}" in out.stdout
    hubs = {r["hub"]: [rev["commit"] for rev in r["revisions"]] for r in ls(cache["dir"])["repos"]}
    assert hubs[cache["b"].hub_identity] == [] and cache["new"] in hubs[cache["a"].hub_identity]

    # the removed variant loads again (downloaded anew, verified)
    module = api.get_kernel(REPO, revision=cache["other"], hub=cache["b"])
    assert module.VERSION_TAG == "v1"

    out = kernelkit("cache", "rm", "kernels-community/nothing", "--cache-dir", d)
    assert out.returncode == ExitCode.NOT_FOUND
    assert "nothing cached matches kernels-community/nothing" in out.stderr


def test_rm_a_whole_repository_dry_run_first(cache: dict[str, Any]) -> None:
    d = str(cache["dir"])
    before = ls(cache["dir"])
    out = kernelkit("cache", "rm", REPO, "--dry-run", "--cache-dir", d)
    assert out.returncode == 0 and out.stdout.count("Would remove") == 2
    assert ls(cache["dir"]) == before
    out = kernelkit("cache", "rm", REPO, "--cache-dir", d)
    assert out.returncode == 0, out.stderr
    assert "Freed" in out.stdout
    assert ls(cache["dir"])["repos"] == []
    assert not [p for p in cache["dir"].iterdir() if not p.name.startswith(".")]


def test_prune_removes_detached_commits_and_leftovers(cache: dict[str, Any],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    d = str(cache["dir"])
    [folder_a] = [Path(r["folder"]) for r in ls(cache["dir"])["repos"]
                  if r["hub"] == cache["a"].hub_identity]
    stale = folder_a / cache["new"] / "build" / f".{HOST}.fetch-0123456789ab"
    stale.mkdir()
    (stale / "half.so").write_bytes(b"\0" * 100)

    from kernelkit.lock.project import lock_project

    cache["a"].tag(REPO, "v1.0.0", cache["old"])  # a project locks the old commit
    project = cache["tmp"] / "app"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        f'[project]\nname = "app"\n\n[tool.kernels.dependencies]\n"{REPO}" = ">=1,<1.1"\n')
    # `kernelkit lock` resolves through the loader, which records the hub's listing (the new
    # tag v1.0.0 -> old) in the cache it uses: lock elsewhere, so that in this cache the old
    # commit stays detached and only --keep-lock keeps it.
    monkeypatch.setenv("KERNELKIT_CACHE", str(cache["tmp"] / "lock-cache"))
    lock_project(project, cache["a"])
    monkeypatch.setenv("KERNELKIT_CACHE", d)
    out = kernelkit("cache", "prune", "--keep-lock", str(project), "--cache-dir", d, "--json")
    assert out.returncode == 0, out.stderr
    removed = json.loads(out.stdout)["removed"]
    assert [(r["what"], r["path"]) for r in removed] == [("leftover", str(stale))]
    assert not stale.exists()

    out = kernelkit("cache", "prune", "--cache-dir", d)
    assert out.returncode == 0, out.stderr
    assert f"Removed {REPO}@{cache['old'][:12]} (detached)" in out.stdout
    commits = [rev["commit"] for r in ls(cache["dir"])["repos"] for rev in r["revisions"]]
    assert sorted(commits) == sorted([cache["new"], cache["other"]])
    assert kernelkit("cache", "prune", "--cache-dir", d).stdout.strip() == "Nothing to remove."


INSTALL_AND_PAUSE = """
import sys, time
from pathlib import Path
import kernelkit
from kernelkit.loader.progress import set_progress_reporter

inside, go = Path(sys.argv[1]), Path(sys.argv[2])


def reporter(status):
    if status.finished:  # the files are fetched, not yet verified nor in place
        inside.write_text("downloading")
        while not go.exists():
            time.sleep(0.05)


set_progress_reporter(reporter)
print(kernelkit.install_kernel(sys.argv[3], version=1))
"""


def test_removals_never_touch_a_download_in_progress(tmp_path: Path) -> None:
    hub = LocalGitHub(tmp_path / "hub")
    publish(hub, tmp_path)
    env = {"KERNELKIT_CACHE": str(tmp_path / "cache"), "KERNELKIT_HUB": str(tmp_path / "hub"),
           "KERNELKIT_PROGRESS_MIN_BYTES": "1"}
    inside, go = tmp_path / "inside", tmp_path / "go"
    installer = subprocess.Popen([sys.executable, "-c", INSTALL_AND_PAUSE, str(inside), str(go),
                                  REPO], env={**os.environ, **env}, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not inside.exists():
            assert installer.poll() is None, installer.communicate()
            assert time.monotonic() < deadline, "the download never started"
            time.sleep(0.05)
        [folder] = (tmp_path / "cache").iterdir()
        for args in (("rm", REPO), ("prune",)):
            out = kernelkit("cache", *args, "--cache-dir", str(tmp_path / "cache"), env=env)
            assert out.returncode == ExitCode.ERROR, (args, out.stdout, out.stderr)
            assert "another process is downloading" in out.stdout
            assert folder.is_dir()
    finally:
        go.write_text("")
        stdout, stderr = installer.communicate(timeout=120)
    assert installer.returncode == 0, stderr
    variant_dir = Path(stdout.strip().splitlines()[-1])
    assert (variant_dir / "metadata.json").is_file()
    out = kernelkit("cache", "rm", REPO, "--cache-dir", str(tmp_path / "cache"), env=env)
    assert out.returncode == 0, out.stderr
    assert not folder.exists()


@pytest.mark.slow
def test_a_real_compiled_build_through_the_hub(img2gray_cpu_build: Path, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The compiled img2gray build (tests/conftest.py), published to a real local hub: loaded
    from the hub it is the module a local load of the same build gives (one build per id),
    `variants` prefers it, `cache ls` counts its shared library, `cache rm` and a new load
    download it again."""
    from kernelkit import get_loaded_kernels

    monkeypatch.setenv("KERNELKIT_CACHE", str(tmp_path / "cache"))
    hub = LocalGitHub(tmp_path / "hub")
    build = img2gray_cpu_build.parent
    files = {f"build/{p.relative_to(build).as_posix()}": p
             for p in sorted(build.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}
    commit = hub.publish("kernelkit-examples/img2gray", "v1", files)
    local = api.get_local_kernel(img2gray_cpu_build)
    from_hub = api.get_kernel("kernelkit-examples/img2gray", version=1, hub=hub,
                              trust_remote_code=True)
    assert from_hub is local
    assert any(lk.repo_info is not None and lk.repo_info.revision == commit
               for lk in get_loaded_kernels() if lk.module is local)

    out = run_cli("variants", "kernelkit-examples/img2gray", "--json", "--hub", str(hub.root))
    [row] = json.loads(out.stdout)["revisions"]
    assert (row["version"], row["commit"]) == (1, commit)
    assert row["variants"][0] == {"variant": img2gray_cpu_build.name, "compatible": True,
                                  "preferred": True, "reason": None}

    [repo] = ls(tmp_path / "cache")["repos"]
    [rev] = repo["revisions"]
    [variant] = rev["variants"]
    so_size = sum(p.stat().st_size for p in img2gray_cpu_build.glob("*.so"))
    assert variant["variant"] == img2gray_cpu_build.name and variant["size"] > so_size > 0

    out = run_cli("cache", "rm", "kernelkit-examples/img2gray", "--variant",
                  img2gray_cpu_build.name, "--cache-dir", str(tmp_path / "cache"))
    assert out.returncode == 0, out.stderr
    assert ls(tmp_path / "cache")["repos"][0]["revisions"][0]["variants"] == []
    variant_dir = api.install_kernel("kernelkit-examples/img2gray", version=1, hub=hub)
    assert sorted(p.name for p in variant_dir.iterdir()) == sorted(
        p.name for p in img2gray_cpu_build.iterdir() if p.name != "__pycache__")
