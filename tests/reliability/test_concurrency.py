"""Concurrency: many processes cold-load one kernel; many uploads race on one new repository
and on as many repositories. Real processes, a real local git hub."""

from __future__ import annotations

import json
from pathlib import Path

from kernelkit.hub.local import LocalGitHub
from kernelkit.loader.cache import RepoCache
from kernelkit.loader.verify import verify_variant
from tests.reliability.common import (
    CONFIG,
    VARIANT,
    finish,
    git_fsck,
    kernelkit,
    publish_tree,
    python,
    staging_leftovers,
    variant_tree,
)

LOAD = """
import json
import kernelkit.loader.install as install
real = install.download_variant
def counted(*a, **k):  # count real downloads (the download itself runs unchanged)
    with open({marker!r}, "a") as fh:
        fh.write("x")
    return real(*a, **k)
install.download_variant = counted
import torch, kernelkit
m = kernelkit.get_kernel({repo!r}, version=1, trust_remote_code=True)
print(json.dumps([m.scale(torch.ones(1)).item(), m.__file__]))
"""


def test_cold_loads_of_one_kernel_download_once(tmp_path: Path) -> None:
    hub = LocalGitHub(tmp_path / "hub")
    repo = "acme/cold"
    commit = publish_tree(hub, repo, "v1", variant_tree(tmp_path / "k", factor=3.0,
                                                         big=2 << 20).parent.parent)
    cache, marker = tmp_path / "cache", tmp_path / "downloads"
    env = {"KERNELKIT_HUB": str(hub.root), "KERNELKIT_CACHE": str(cache)}
    procs = [python(LOAD.format(marker=str(marker), repo=repo), **env)
             for _ in range(CONFIG.loaders)]
    results = [finish(p) for p in procs]
    assert all(rc == 0 for rc, _, _ in results), [err for _, _, err in results]
    outs = {out.strip() for _, out, _ in results}
    assert len(outs) == 1 and json.loads(outs.pop())[0] == 3.0  # one file, the right kernel
    assert marker.read_text() == "x"  # exactly one download among all processes
    rc = RepoCache.of(cache, repo, hub.hub_identity)
    verify_variant(rc.variant_dir(commit, VARIANT), "cache")  # the cache verifies
    assert staging_leftovers(cache) == []


def _upload(tmp: Path, hub_dir: Path, repo: str, i: int) -> tuple[int, str, str]:
    root = variant_tree(tmp / f"p{i}", version=i, factor=float(i)).parent.parent
    (root / "build" / "CARD.md").write_text(f"# kernel {i}\n")
    return finish(kernelkit("upload", str(root), "--repo-id", repo, "--branch", f"v{i}",
                            "--tag", f"v{i}.0.0", "--hub", str(hub_dir)), timeout=600)


def _check_release(hub: LocalGitHub, repo: str, i: int) -> None:
    """Version ``i`` landed whole: branch and tag on one commit holding the whole variant."""
    refs = hub.list_refs(repo)
    commit = refs.branches[f"v{i}"]
    assert refs.tags[f"v{i}.0.0"] == commit
    paths = {e.path for e in hub.list_files(repo, commit)}
    assert {f"build/{VARIANT}/{f}" for f in ("__init__.py", "_ops.py", "metadata.json")} <= paths
    meta = json.loads(hub.read_file(repo, commit, f"build/{VARIANT}/metadata.json") or b"{}")
    assert meta["version"] == i


def test_concurrent_uploads_to_one_new_repository(tmp_path: Path) -> None:
    import concurrent.futures as cf

    hub_dir, repo, n = tmp_path / "hub", "acme/racy", CONFIG.uploaders
    with cf.ThreadPoolExecutor(n) as pool:
        results = list(pool.map(lambda i: _upload(tmp_path, hub_dir, repo, i), range(1, n + 1)))
    assert all(rc == 0 for rc, _, _ in results), [err for _, _, err in results]
    hub = LocalGitHub(hub_dir)
    for i in range(1, n + 1):
        _check_release(hub, repo, i)
    assert hub.read_file(repo, hub.resolve(repo, "main"), "README.md") is not None
    git_fsck(hub.repo_path(repo))


def test_concurrent_uploads_to_many_repositories(tmp_path: Path) -> None:
    import concurrent.futures as cf

    hub_dir, n = tmp_path / "hub", CONFIG.uploaders
    with cf.ThreadPoolExecutor(n) as pool:
        results = list(pool.map(lambda i: _upload(tmp_path, hub_dir, f"org{i % 3}/k{i}", i),
                                range(1, n + 1)))
    assert all(rc == 0 for rc, _, _ in results), [err for _, _, err in results]
    hub = LocalGitHub(hub_dir)
    for i in range(1, n + 1):
        _check_release(hub, f"org{i % 3}/k{i}", i)
        git_fsck(hub.repo_path(f"org{i % 3}/k{i}"))
