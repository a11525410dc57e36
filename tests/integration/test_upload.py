"""``upload`` / ``kernelkit upload`` into a real local git hub (tmp directories)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kernelkit.artifact.layout import seal_variant
from kernelkit.artifact.metadata import Metadata
from kernelkit.errors import HubError, IntegrityError, KernelkitError
from kernelkit.hub.local import LocalGitHub
from kernelkit.publish.upload import upload
from tests.helpers import hub_git, make_variant

DATA = Path(__file__).resolve().parents[1] / "data" / "hub" / "demo"
ROOT = Path(__file__).resolve().parents[2]
REPO = "acme/demo"
CPU = "torch213-cxx11-cpu-x86_64-linux"
CUDA = "torch213-cxx11-cu130-x86_64-linux"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    proj = tmp_path / "demo"
    shutil.copytree(DATA, proj)
    return proj



def paths(hub: LocalGitHub, commit: str) -> set[str]:
    return {e.path for e in hub.list_files(REPO, commit)}


def add_files(vdir: Path, files: dict[str, bytes]) -> None:
    """Add files to a variant and re-seal it (a rebuilt variant)."""
    for rel, data in files.items():
        (vdir / rel).parent.mkdir(parents=True, exist_ok=True)
        (vdir / rel).write_bytes(data)
    seal_variant(vdir, Metadata.read(vdir / "metadata.json"))


def test_upload_project_layout_card_and_main(project: Path, hub: LocalGitHub) -> None:
    make_variant(project / "build", CPU)
    make_variant(project / "build", CUDA)
    result = upload(project, hub, tag="v1.0.0")
    assert (result.repo_id, result.branch, result.tag) == (REPO, "v1", "v1.0.0")
    assert result.variants == (CPU, CUDA) and result.changed
    assert hub.resolve(REPO, "v1") == result.commit == hub.resolve(REPO, "v1.0.0")
    assert paths(hub, result.commit) == {
        "README.md", "benchmarks/benchmark_scale.py",
        *(f"build/{v}/{f}" for v in (CPU, CUDA) for f in ("__init__.py", "_ops.py",
                                                           "metadata.json", "symbols.json")),
    }
    readme = hub.read_file(REPO, result.commit, "README.md")
    assert readme is not None
    text = readme.decode()
    assert 'get_kernel("acme/demo", version=1)' in text and "license: apache-2.0" in text
    assert "# demo" in text
    assert hub.read_file(REPO, hub.resolve(REPO, "main"), "README.md") == readme
    assert result.main_commit == hub.resolve(REPO, "main")
    # The published bytes are the build tree's bytes.
    local = project / "build" / CPU / "metadata.json"
    assert hub.read_file(REPO, result.commit, f"build/{CPU}/metadata.json") == local.read_bytes()


def test_two_versions_live_on_two_branches(tmp_path: Path, hub: LocalGitHub) -> None:
    r1 = upload(make_variant(tmp_path / "a" / "build", CPU, version=1).parent, hub, repo_id=REPO)
    r2 = upload(make_variant(tmp_path / "b" / "build", CPU, version=2, factor=3.0).parent, hub,
                repo_id=REPO, tag="v2.1.0")
    refs = hub.list_refs(REPO)
    # without a CARD.md, main gets a generated card (every repository has main: Hub clients)
    assert refs.branches == {"v1": r1.commit, "v2": r2.commit, "main": r1.main_commit}
    assert r2.main_commit is None  # an existing card on main is kept
    assert refs.tags == {"v2.1.0": r2.commit}
    init = hub.read_file(REPO, r2.commit, f"build/{CPU}/__init__.py")
    assert init is not None and b"x * 3.0" in init


def test_reupload_replaces_variant_wholly_and_keeps_others(tmp_path: Path,
                                                           hub: LocalGitHub) -> None:
    first = tmp_path / "first" / "build"
    add_files(make_variant(first, CPU), {"stale.py": b"old", "sub/old.json": b"{}"})
    make_variant(first, CUDA)
    r1 = upload(first, hub, repo_id=REPO)
    assert f"build/{CPU}/stale.py" in paths(hub, r1.commit)
    second = tmp_path / "second" / "build"
    add_files(make_variant(second, CPU, factor=5.0), {"new.py": b"new"})
    r2 = upload(second, hub, repo_id=REPO)
    got = paths(hub, r2.commit)
    assert f"build/{CPU}/stale.py" not in got and f"build/{CPU}/sub/old.json" not in got
    assert f"build/{CPU}/new.py" in got
    assert {f"build/{CUDA}/__init__.py", f"build/{CUDA}/metadata.json"} <= got  # kept
    assert hub_git(hub, REPO, "rev-parse", f"{r2.commit}^") == r1.commit


def test_new_branch_holds_only_what_is_uploaded(tmp_path: Path, hub: LocalGitHub) -> None:
    upload(make_variant(tmp_path / "a" / "build", CUDA).parent, hub, repo_id=REPO)
    r = upload(make_variant(tmp_path / "b" / "build", CPU).parent, hub, repo_id=REPO,
               branch="v1-cpu-only")
    assert {p.split("/")[1] for p in paths(hub, r.commit)} == {CPU}


def test_noop_reupload_makes_no_commit(project: Path, hub: LocalGitHub) -> None:
    make_variant(project / "build", CPU)
    r1 = upload(project, hub)
    count = hub_git(hub, REPO, "rev-list", "--count", "--all")
    r2 = upload(project, hub)
    assert not r2.changed and r2.commit == r1.commit
    assert hub_git(hub, REPO, "rev-list", "--count", "--all") == count


def test_tampered_tree_is_refused(project: Path, hub: LocalGitHub) -> None:
    vdir = make_variant(project / "build", CPU)
    (vdir / "_ops.py").write_text("import os; os.system('evil')\n")
    with pytest.raises(IntegrityError) as exc:
        upload(project, hub)
    assert exc.value.file.endswith("_ops.py") and "nothing was published" in str(exc.value)
    assert not hub.repo_exists(REPO)
    (vdir / "_ops.py").unlink()
    (vdir / "extra.py").write_text("")
    with pytest.raises(IntegrityError, match=r"extra.py"):
        upload(project, hub)


def test_unsealed_variant_is_refused(tmp_path: Path, hub: LocalGitHub) -> None:
    vdir = make_variant(tmp_path / "build", CPU)
    meta = json.loads((vdir / "metadata.json").read_text())
    del meta["digest"]
    (vdir / "metadata.json").write_text(json.dumps(meta))
    with pytest.raises(IntegrityError, match="not sealed"):
        upload(tmp_path, hub, repo_id=REPO)


def test_choice_of_repo_and_branch(tmp_path: Path, hub: LocalGitHub) -> None:
    build = tmp_path / "p" / "build"
    make_variant(build, CPU, version=1)
    with pytest.raises(KernelkitError, match="no repository id"):
        upload(build, hub)
    make_variant(build, CUDA, version=2)
    with pytest.raises(KernelkitError, match="multiple versions"):
        upload(build, hub, repo_id=REPO)
    assert upload(build, hub, repo_id=REPO, branch="dev").branch == "dev"
    with pytest.raises(KernelkitError, match="no build variants"):
        upload(tmp_path / "empty", hub, repo_id=REPO)


def test_bad_tag_refused_before_publishing(project: Path, hub: LocalGitHub) -> None:
    make_variant(project / "build", CPU)
    with pytest.raises(HubError, match="major version 2 but the branch is v1"):
        upload(project, hub, tag="v2.0.0")
    assert not hub.repo_exists(REPO)
    r1 = upload(project, hub, tag="v1.0.0")
    add_files(project / "build" / CPU, {"more.py": b""})
    with pytest.raises(HubError, match="tags never move"):
        upload(project, hub, tag="v1.0.0")
    assert hub.resolve(REPO, "v1.0.0") == r1.commit


def test_cli_upload_and_hub_list(project: Path, tmp_path: Path) -> None:
    make_variant(project / "build", CPU)
    env = {**os.environ, "KERNELKIT_HUB_DIR": str(tmp_path / "hub")}
    cli = [sys.executable, "-m", "kernelkit"]
    out = subprocess.run([*cli, "upload", str(project), "--tag", "v1.0.0"], env=env,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    commit = LocalGitHub(tmp_path / "hub").resolve(REPO, "v1")
    for line in ("repo:     acme/demo", "branch:   v1", f"commit:   {commit}",
                 "tag:      v1.0.0", f"variants: {CPU}"):
        assert line in out.stdout
    again = subprocess.run([*cli, "upload", str(project)], env=env, capture_output=True,
                           text=True)
    assert "no changes" in again.stdout
    listed = subprocess.run([*cli, "hub", "list"], env=env, capture_output=True, text=True)
    assert listed.stdout.split() == [REPO]
    refs = subprocess.run([*cli, "hub", "list", REPO], env=env, capture_output=True, text=True)
    assert f"branch v1           {commit[:12]}  {CPU}" in refs.stdout
    bad = subprocess.run([*cli, "upload", str(project), "--tag", "v3.0.0"], env=env,
                         capture_output=True, text=True)
    assert bad.returncode == 1 and "major version 3" in bad.stderr


# --- an interrupted upload ------------------------------------------------------------------

UPLOADER = """
import sys
from pathlib import Path
from kernelkit.hub.local import LocalGitHub
from kernelkit.publish.upload import upload
upload(Path(sys.argv[1]), LocalGitHub(Path(sys.argv[2])), repo_id="acme/demo")
"""


def big_variant(build: Path, seed: int, n: int = 600) -> Path:
    vdir = make_variant(build, CPU, factor=float(seed))
    add_files(vdir, {f"data/{i:04d}.bin": os.urandom(16 << 10) for i in range(n)})
    return vdir


def loose_objects(hub: LocalGitHub) -> int:
    objects = hub.repo_path(REPO) / "objects"
    return sum(len(os.listdir(d)) for d in objects.glob("[0-9a-f][0-9a-f]"))


def test_killed_upload_leaves_the_hub_readable(tmp_path: Path, hub: LocalGitHub) -> None:
    old = upload(big_variant(tmp_path / "old" / "build", 1).parent, hub, repo_id=REPO)
    old_init = (tmp_path / "old" / "build" / CPU / "__init__.py").read_bytes()
    new_build = big_variant(tmp_path / "new" / "build", 2).parent
    baseline = loose_objects(hub)
    proc = subprocess.Popen([sys.executable, "-c", UPLOADER, str(new_build), str(hub.root)],
                            cwd=ROOT, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while loose_objects(hub) <= baseline + 20 and proc.poll() is None:
            assert time.monotonic() < deadline, "the uploader never started writing objects"
            time.sleep(0.001)
        written = loose_objects(hub) - baseline
        os.killpg(proc.pid, signal.SIGKILL)  # the uploader and its git child, mid-write
    finally:
        proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the upload finished before it could be killed"
    assert 0 < written < 600
    # Readers still see the old commit, completely.
    reader = LocalGitHub(hub.root)
    assert reader.resolve(REPO, "v1") == old.commit
    dest = tmp_path / "fetched"
    files = [e.path for e in reader.list_files(REPO, old.commit)]
    reader.fetch(REPO, old.commit, files, dest)
    assert (dest / "build" / CPU / "__init__.py").read_bytes() == old_init
    assert len(files) == 604  # 600 data files, __init__.py, _ops.py, metadata and symbols.json
    subprocess.run(["git", f"--git-dir={hub.repo_path(REPO)}", "fsck", "--strict"], check=True,
                   capture_output=True)
    # A retry publishes the new tree on top of the old commit.
    retry = upload(new_build, LocalGitHub(hub.root), repo_id=REPO)
    assert retry.changed and hub_git(hub, REPO, "rev-parse", f"{retry.commit}^") == old.commit
    got = reader.read_file(REPO, retry.commit, f"build/{CPU}/data/0599.bin")
    assert got == (new_build / CPU / "data" / "0599.bin").read_bytes()
