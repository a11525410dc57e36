"""``kernelkit lock`` against a real local git hub."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kernelkit.errors import LockError
from kernelkit.hub.local import LocalGitHub
from kernelkit.loader.versions import VersionNotFoundError
from kernelkit.lock.hashing import hash_variant_dir
from kernelkit.lock.lockfile import read_locks
from kernelkit.lock.project import lock_project, read_dependencies
from tests.helpers import make_variant

REPO = "acme/demo"


def publish(hub: LocalGitHub, tmp: Path, branch: str, factor: float, *, tag: str | None = None,
            variants: tuple[str, ...] = ("torch-cpu",), repo: str = REPO) -> str:
    build = tmp / f"src-{branch}-{factor}" / "build"
    files: dict[str, Path] = {}
    for variant in variants:
        vdir = make_variant(build, variant, factor=factor, tag=tag or branch)
        files |= {f"build/{variant}/{p.relative_to(vdir).as_posix()}": p
                  for p in vdir.rglob("*") if p.is_file()}
    commit = hub.publish(repo, branch, files, delete_prefixes=("build/",))
    if tag:
        hub.tag(repo, tag, commit)
    return commit


def write_project(root: Path, deps: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text(
        '[project]\nname = "app"\nversion = "0"\n\n[tool.kernels.dependencies]\n' + deps)
    return root


def test_lock_resolves_majors_and_specifiers(tmp_path: Path) -> None:
    hub = LocalGitHub(tmp_path / "hub")
    v1 = publish(hub, tmp_path, "v1", 1.0, tag="v1.0.0")
    v11 = publish(hub, tmp_path, "v1", 1.5, tag="v1.1.0",
                  variants=("torch-cpu", "torch213-cxx11-cpu-x86_64-linux"))
    publish(hub, tmp_path, "v2", 2.0, tag="v2.0.0")
    publish(hub, tmp_path, "v1", 3.0, repo="acme/other")
    proj = write_project(tmp_path / "app", f'"{REPO}" = ">=1,<2"\n"acme/other" = 1\n')

    result = lock_project(proj, hub)
    locks = {lock.repo_id: lock for lock in read_locks(proj / "kernels.lock")}
    assert locks[REPO].sha == v11 != v1
    assert sorted(locks[REPO].variants) == ["torch-cpu", "torch213-cxx11-cpu-x86_64-linux"]
    assert result.written and sorted(result.changed) == ["acme/demo", "acme/other"]
    # the hash from the listing equals the hash of the files as fetched
    hub.fetch(REPO, v11, [e.path for e in hub.list_files(REPO, v11, "build/torch-cpu")],
              tmp_path / "fetched")
    assert locks[REPO].variants["torch-cpu"].hash == hash_variant_dir(
        tmp_path / "fetched" / "build" / "torch-cpu")
    # kernels.lock as upstream writes it: a = N dependency is a version, a specifier the
    # release tag it chose; the hashes are in the sidecar
    data = json.loads((proj / "kernels.lock").read_text())
    assert data == [
        {"dependency": {"repo-id": "acme/demo", "revision": "v1.1.0"}, "lock": {"commit": v11}},
        {"dependency": {"repo-id": "acme/other", "version": 1},
         "lock": {"commit": locks["acme/other"].sha}}]
    side = json.loads((proj / "kernels.lock.hashes").read_text())
    assert side["kernels"][REPO]["commit"] == v11
    assert side["kernels"][REPO]["variants"]["torch-cpu"]["hash_type"] == "git_lfs_concat"


def test_relock_is_byte_identical_and_keeps_mtime(tmp_path: Path) -> None:
    hub = LocalGitHub(tmp_path / "hub")
    publish(hub, tmp_path, "v1", 1.0)
    proj = write_project(tmp_path / "app", f'"{REPO}" = 1\n')
    cmd = [sys.executable, "-m", "kernelkit", "lock", str(proj), "--hub", str(hub.root)]
    subprocess.run(cmd, check=True, capture_output=True)
    first = (proj / "kernels.lock").read_bytes()
    mtime = (proj / "kernels.lock").stat().st_mtime_ns
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    assert "up to date" in out.stderr
    assert (proj / "kernels.lock").read_bytes() == first
    assert (proj / "kernels.lock").stat().st_mtime_ns == mtime
    # a new commit on v1 changes only that entry
    new = publish(hub, tmp_path, "v1", 9.0)
    subprocess.run(cmd, check=True, capture_output=True)
    assert read_locks(proj / "kernels.lock")[0].sha == new


def test_relock_lists_files_only_for_changed_commits(tmp_path: Path) -> None:
    hub = LocalGitHub(tmp_path / "hub")
    publish(hub, tmp_path, "v1", 1.0)
    proj = write_project(tmp_path / "app", f'"{REPO}" = 1\n')
    lock_project(proj, hub)
    fresh = LocalGitHub(hub.root)
    result = lock_project(proj, fresh)
    assert not result.written and result.changed == []
    assert fresh.git_calls == 1  # one refs listing, no tree listing


def test_missing_table_and_bad_values_are_clear_errors(tmp_path: Path) -> None:
    proj = tmp_path / "p"
    proj.mkdir()
    (proj / "pyproject.toml").write_text('[project]\nname = "x"\n')
    with pytest.raises(LockError, match=r"no \[tool.kernels.dependencies\] table"):
        read_dependencies(proj)
    write_project(proj, '"acme/demo" = 1.5\n')
    with pytest.raises(LockError, match=r"acme/demo.*must be a major version"):
        read_dependencies(proj)
    write_project(proj, '"demo" = 1\n')
    with pytest.raises(LockError, match="'org/name'"):
        read_dependencies(proj)
    with pytest.raises(LockError, match=r"no pyproject.toml"):
        read_dependencies(tmp_path / "nothing")


def test_unmatched_version_lists_what_exists(tmp_path: Path) -> None:
    hub = LocalGitHub(tmp_path / "hub")
    publish(hub, tmp_path, "v1", 1.0, tag="v1.0.0")
    proj = write_project(tmp_path / "app", f'"{REPO}" = "~=2.0"\n')
    with pytest.raises(VersionNotFoundError, match=r"available release tags: v1.0.0"):
        lock_project(proj, hub)
    assert not (proj / "kernels.lock").exists()
