"""Locked loading on a real local git hub: get_locked_kernel, download, load_kernel."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from kernelkit.artifact.layout import seal_variant
from kernelkit.artifact.metadata import Metadata
from kernelkit.errors import IntegrityError, LockError, OfflineError
from kernelkit.hub.local import LocalGitHub
from kernelkit.loader.cache import RepoCache
from kernelkit.lock.api import get_locked_kernel, load_kernel
from kernelkit.lock.download import download_locked
from kernelkit.lock.project import lock_project
from kernelkit.lock.verify import LockMismatchError
from tests.helpers import make_variant

VARIANTS = ("torch-cpu", "torch213-cxx11-cpu-x86_64-linux", "torch-cuda")


def publish(hub: LocalGitHub, tmp: Path, repo: str, uid: str, factor: float,
            tag: str = "v1.0.0") -> str:
    build = tmp / f"src-{uid}" / "build"
    files: dict[str, Path] = {}
    for variant in VARIANTS:
        vdir = make_variant(build, variant, name=repo.split("/")[1], uid=uid, factor=factor)
        files |= {f"build/{variant}/{p.relative_to(vdir).as_posix()}": p
                  for p in vdir.rglob("*") if p.is_file()}
    commit = hub.publish(repo, "v1", files)
    hub.tag(repo, tag, commit)
    return commit


@pytest.fixture
def project(tmp_path: Path, request: pytest.FixtureRequest) -> tuple[Path, LocalGitHub, str]:
    """A locked project depending on one kernel with a test-unique op namespace."""
    uid = f"l{zlib.crc32(request.node.name.encode()) % 10**6:06d}"
    repo = f"acme/lk{uid}"
    hub = LocalGitHub(tmp_path / "hub")
    publish(hub, tmp_path, repo, uid, 4.0)
    proj = tmp_path / "app"
    proj.mkdir()
    (proj / "pyproject.toml").write_text(
        f'[project]\nname = "app"\n\n[tool.kernels.dependencies]\n"{repo}" = ">=1"\n')
    lock_project(proj, hub)
    return proj, hub, repo


def test_download_then_load_without_any_hub(project: tuple[Path, LocalGitHub, str],
                                            tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    proj, hub, repo = project
    dest = tmp_path / "offline-kernels"
    done = download_locked(proj, hub, dest, all_variants=True)
    assert sorted(d.variant for d in done) == sorted(VARIANTS)
    # the hub is gone: nothing may reach it
    monkeypatch.setenv("KERNELKIT_HUB", str(tmp_path / "no-such-hub"))
    monkeypatch.setenv("KERNELKIT_CACHE", str(tmp_path / "empty-cache"))
    mod = load_kernel(repo, lockfile=proj / "kernels.lock", cache_dir=dest)
    assert mod.scale(torch.ones(2)).tolist() == [4.0, 4.0]
    assert str(dest) in mod.__file__


def test_load_kernel_takes_the_lock_matching_copy_from_any_hub(
        project: tuple[Path, LocalGitHub, str], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The cache is keyed by hub; the same locked commit downloaded from two hubs (a copy of the
    hub: same commit ids) lies in two folders. One is tampered (and re-sealed): load_kernel,
    configured for a third hub, skips it and loads the copy that matches the lock hash."""
    import shutil

    import torch

    proj, hub, repo = project
    copy = LocalGitHub(tmp_path / "hub-copy")
    shutil.copytree(hub.root, copy.root)
    dest = tmp_path / "dl"
    [good] = download_locked(proj, hub, dest)
    [bad] = download_locked(proj, copy, dest)
    assert good.path != bad.path and good.sha == bad.sha
    (bad.path / "__init__.py").write_text((bad.path / "__init__.py").read_text()
                                          .replace("x * 4.0", "x * 5.0"))
    seal_variant(bad.path, Metadata.read(bad.path / "metadata.json"))
    for receipt in bad.path.parent.glob(f".{bad.variant}.receipt"):
        receipt.unlink()
    monkeypatch.setenv("KERNELKIT_HUB", str(tmp_path / "third-hub"))
    mod = load_kernel(repo, lockfile=proj, cache_dir=dest)
    assert mod.scale(torch.ones(1)).item() == 4.0
    assert Path(mod.__file__).parent == good.path
    monkeypatch.setenv("KERNELKIT_HUB", str(copy.root))  # the tampered copy's own hub
    with pytest.raises(LockMismatchError):
        load_kernel(repo, lockfile=proj, cache_dir=dest)


def test_load_kernel_in_a_fresh_process_with_hub_unreachable(
        project: tuple[Path, LocalGitHub, str], tmp_path: Path) -> None:
    proj, hub, repo = project
    dest = tmp_path / "dl"
    subprocess.run([sys.executable, "-m", "kernelkit", "download", str(proj), "--dest", str(dest),
                    "--hub", str(hub.root)], check=True, capture_output=True)
    code = (f"import torch, kernelkit; m = kernelkit.load_kernel({repo!r}, "
            f"lockfile={str(proj)!r}, cache_dir=__import__('pathlib').Path({str(dest)!r})); "
            "print(m.scale(torch.ones(1)).item())")
    env = {"PATH": "/usr/bin:/bin", "KERNELKIT_HUB": "git+ssh://unreachable.invalid/k",
           "KERNELKIT_CACHE": str(tmp_path / "nothing"), "HOME": str(tmp_path),
           # the source under test, when it is not the installed one (a worktree)
           **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"}}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "4.0"


def test_load_kernel_says_what_to_download(project: tuple[Path, LocalGitHub, str],
                                          tmp_path: Path) -> None:
    proj, _, repo = project
    with pytest.raises(OfflineError, match="kernelkit download") as info:
        load_kernel(repo, lockfile=proj, cache_dir=tmp_path / "empty")
    assert "was not downloaded" in str(info.value)


def test_get_locked_kernel_fetches_the_locked_commit(project: tuple[Path, LocalGitHub, str],
                                                     tmp_path: Path) -> None:
    import torch

    proj, hub, repo = project
    locked = json.loads((proj / "kernels.lock").read_text())[0]["lock"]["commit"]
    publish(hub, tmp_path, repo, "zzz9999", 7.0, tag="v1.1.0")  # v1 moves on; the lock does not
    cache = tmp_path / "cache"
    mod = get_locked_kernel(repo, lockfile=proj / "kernels.lock", hub=hub, cache_dir=cache)
    assert mod.scale(torch.ones(1)).item() == 4.0
    assert RepoCache.of(cache, repo, hub.hub_identity).commit_dir(locked).is_dir()


def test_flipped_byte_in_downloaded_file_fails(project: tuple[Path, LocalGitHub, str],
                                               tmp_path: Path) -> None:
    proj, hub, repo = project
    dest = tmp_path / "dl"
    [d] = download_locked(proj, hub, dest)
    init = d.path / "__init__.py"
    data = bytearray(init.read_bytes())
    data[-2] ^= 0x01
    init.write_bytes(bytes(data))
    with pytest.raises(IntegrityError):
        load_kernel(repo, lockfile=proj, cache_dir=dest)


def test_resealed_tampering_is_caught_by_the_lock(project: tuple[Path, LocalGitHub, str],
                                                  tmp_path: Path) -> None:
    """A file changed *and* metadata.json re-sealed (its digest matches again, and the loader's
    receipt is gone): only the lock hash still knows the published content."""
    proj, hub, repo = project
    dest = tmp_path / "dl"
    [d] = download_locked(proj, hub, dest)
    (d.path / "__init__.py").write_text((d.path / "__init__.py").read_text()
                                        .replace("x * 4.0", "x * 5.0"))
    seal_variant(d.path, Metadata.read(d.path / "metadata.json"))
    for receipt in d.path.parent.glob(f".{d.variant}.receipt"):
        receipt.unlink()
    with pytest.raises(LockMismatchError) as info:
        load_kernel(repo, lockfile=proj, cache_dir=dest)
    assert isinstance(info.value, LockError) and isinstance(info.value, IntegrityError)
    assert d.variant in str(info.value)


def test_flipped_byte_in_lock_fails(project: tuple[Path, LocalGitHub, str],
                                    tmp_path: Path) -> None:
    proj, hub, repo = project
    dest = tmp_path / "dl"
    [d] = download_locked(proj, hub, dest)
    hashes = proj / "kernels.lock.hashes"
    data = json.loads(hashes.read_text())
    good = data["kernels"][repo]["variants"][d.variant]["hash"]
    bad = good[:-1] + ("0" if good[-1] != "0" else "1")
    data["kernels"][repo]["variants"][d.variant]["hash"] = bad
    hashes.write_text(json.dumps(data, indent=2))
    with pytest.raises(LockMismatchError) as info:
        load_kernel(repo, lockfile=proj, cache_dir=dest)
    msg = str(info.value)
    assert d.variant in msg and f"expected {bad}" in msg and f"got {good}" in msg
    with pytest.raises(LockMismatchError):
        get_locked_kernel(repo, lockfile=proj, hub=hub, cache_dir=dest)


def test_unlocked_kernel_is_refused(project: tuple[Path, LocalGitHub, str],
                                    tmp_path: Path) -> None:
    proj, _, _ = project
    with pytest.raises(LockError, match="Kernel `acme/other` is not locked"):
        load_kernel("acme/other", lockfile=proj, cache_dir=tmp_path)


def test_lockfile_found_next_to_the_calling_script(project: tuple[Path, LocalGitHub, str],
                                                   tmp_path: Path) -> None:
    proj, hub, repo = project
    pkg = proj / "src" / "app"
    pkg.mkdir(parents=True)
    (pkg / "main.py").write_text(
        "import sys, torch\nfrom pathlib import Path\nfrom kernelkit import get_locked_kernel\n"
        f"m = get_locked_kernel({repo!r}, cache_dir=Path(sys.argv[1]))\n"
        "print(m.scale(torch.ones(1)).item())\n")
    out = subprocess.run(
        [sys.executable, str(pkg / "main.py"), str(tmp_path / "c")], cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "KERNELKIT_HUB": str(hub.root)},
        capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "4.0"


def _as_upstream_wrote_it(proj: Path) -> str:
    """Drop kernelkit's hashes: ``kernels.lock`` alone, as upstream's ``kernels lock`` leaves
    it (commit only). Returns the locked commit."""
    (proj / "kernels.lock.hashes").unlink()
    [entry] = json.loads((proj / "kernels.lock").read_text())
    return str(entry["lock"]["commit"])


def test_an_upstream_lock_loads_pinned_by_commit_and_digest(
        project: tuple[Path, LocalGitHub, str], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    proj, hub, repo = project
    locked = _as_upstream_wrote_it(proj)
    publish(hub, tmp_path, repo, "zzz9999", 7.0, tag="v1.1.0")  # v1 moves on; the lock does not
    mod = get_locked_kernel(repo, lockfile=proj, hub=hub, cache_dir=tmp_path / "c1")
    assert mod.scale(torch.ones(1)).item() == 4.0
    dest = tmp_path / "dl"
    [d] = download_locked(proj, hub, dest)
    assert d.sha == locked
    monkeypatch.setenv("KERNELKIT_HUB", str(hub.root))
    assert load_kernel(repo, lockfile=proj, cache_dir=dest).scale(torch.ones(1)).item() == 4.0
    # without a lock hash the digest is what holds the files: a changed byte is refused
    init = d.path / "__init__.py"
    init.write_bytes(init.read_bytes().replace(b"x * 4.0", b"x * 4.5"))
    for receipt in d.path.parent.glob(f".{d.variant}.receipt"):
        receipt.unlink()
    with pytest.raises(IntegrityError, match=r"__init__\.py"):
        load_kernel(repo, lockfile=proj, cache_dir=dest)


def test_without_hashes_load_kernel_trusts_only_the_configured_hubs_copy(
        project: tuple[Path, LocalGitHub, str], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A commit id alone is only what one hub says it is (the cache is keyed by hub): with no
    lock hash to pin the content, another hub's folder is not searched."""
    proj, hub, repo = project
    _as_upstream_wrote_it(proj)
    dest = tmp_path / "dl"
    download_locked(proj, hub, dest)
    monkeypatch.setenv("KERNELKIT_HUB", str(tmp_path / "another-hub"))
    with pytest.raises(OfflineError, match="was not downloaded"):
        load_kernel(repo, lockfile=proj, cache_dir=dest)


def test_kernelkits_previous_lock_format_still_loads_and_says_how_to_rewrite_it(
        project: tuple[Path, LocalGitHub, str], tmp_path: Path) -> None:
    import torch

    proj, hub, repo = project
    new = json.loads((proj / "kernels.lock").read_text())
    side = json.loads((proj / "kernels.lock.hashes").read_text())["kernels"][repo]
    (proj / "kernels.lock.hashes").unlink()
    (proj / "kernels.lock").write_text(json.dumps(
        [{"repo_id": repo, "sha": side["commit"], "variants": side["variants"]}], indent=2))
    with pytest.warns(FutureWarning, match=r"previous kernels.lock format.*`kernelkit lock"):
        mod = get_locked_kernel(repo, lockfile=proj, hub=hub, cache_dir=tmp_path / "c")
    assert mod.scale(torch.ones(1)).item() == 4.0
    cli = [sys.executable, "-m", "kernelkit"]
    out = subprocess.run([*cli, "download", str(proj), "--hub", str(hub.root), "--dest",
                          str(tmp_path / "d")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "previous format, which upstream kernels cannot read" in out.stderr
    assert "`kernelkit lock <project>`" in out.stderr
    # the lock is verified with the hashes the old file carried
    out = subprocess.run([*cli, "lock", str(proj), "--hub", str(hub.root)], capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stderr
    assert "converted" in out.stderr
    assert json.loads((proj / "kernels.lock").read_text()) == new
    assert json.loads((proj / "kernels.lock.hashes").read_text())["kernels"][repo] == side


def test_kernelkit_lock_adds_hashes_to_an_upstream_lock(project: tuple[Path, LocalGitHub, str],
                                                        tmp_path: Path) -> None:
    proj, hub, repo = project
    locked = _as_upstream_wrote_it(proj)
    out = subprocess.run([sys.executable, "-m", "kernelkit", "download", str(proj), "--hub",
                          str(hub.root), "--dest", str(tmp_path / "d")],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "has no variant hashes" in out.stderr and "`kernelkit lock` adds" in out.stderr
    before = (proj / "kernels.lock").read_bytes()
    result = lock_project(proj, hub)
    assert (proj / "kernels.lock").read_bytes() == before  # same commit, same bytes
    assert result.written and not result.converted
    side = json.loads((proj / "kernels.lock.hashes").read_text())["kernels"][repo]
    assert side["commit"] == locked and sorted(side["variants"]) == sorted(VARIANTS)
