"""Offline loading from the cache alone, and many processes sharing one cold download."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kernelkit.errors import OfflineError
from kernelkit.hub.local import LocalGitHub
from kernelkit.loader.cache import RepoCache
from kernelkit.loader.offline import record_refs, select_offline
from tests.helpers import make_variant

REPO = "acme/scale"

# Each process wraps the hub so that every call is appended to a shared log (one line per
# call: pid, method), then loads the kernel into the shared, initially empty cache.
WORKER = textwrap.dedent('''
    import os, sys, time
    from pathlib import Path
    import torch
    from kernelkit.hub.local import LocalGitHub
    from kernelkit.loader.api import get_kernel

    hub_root, cache, log, start = sys.argv[1:5]
    class CountingHub(LocalGitHub):
        def _log(self, what):
            with open(log, "a") as fh:
                fh.write(f"{os.getpid()} {what}\\n")
        def list_refs(self, repo_id):
            self._log("list_refs"); return super().list_refs(repo_id)
        def resolve(self, repo_id, rev):
            self._log("resolve"); return super().resolve(repo_id, rev)
        def list_dirs(self, repo_id, commit, path="build"):
            self._log("list_dirs"); return super().list_dirs(repo_id, commit, path)
        def list_files(self, repo_id, commit, path=""):
            self._log("list_files"); return super().list_files(repo_id, commit, path)
        def fetch(self, repo_id, commit, paths, dest):
            self._log("fetch"); return super().fetch(repo_id, commit, paths, dest)
        def read_file(self, repo_id, commit, path):
            self._log("read_file"); return super().read_file(repo_id, commit, path)
    while time.time() < float(start):
        time.sleep(0.005)
    m = get_kernel("acme/scale", version=1, hub=CountingHub(Path(hub_root)),
                   cache_dir=Path(cache), trust_remote_code=True)
    print(m.scale(torch.ones(1)).item())
''')


@pytest.fixture
def hub(tmp_path: Path) -> LocalGitHub:
    hub = LocalGitHub(tmp_path / "hub")
    build = tmp_path / "src" / "build"
    files: dict[str, Path] = {}
    for variant in ("torch-cpu", "torch213-cxx11-cpu-x86_64-linux", "torch-cuda"):
        vdir = make_variant(build, variant, name="scale", uid="sc12345", factor=6.0)
        files |= {f"build/{variant}/{p.relative_to(vdir).as_posix()}": p
                  for p in vdir.rglob("*") if p.is_file()}
    commit = hub.publish(REPO, "v1", files)
    hub.tag(REPO, "v1.0.0", commit)
    return hub


def run_workers(hub: LocalGitHub, tmp_path: Path, n: int) -> list[str]:
    import time

    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    log = tmp_path / "calls.log"
    log.touch()
    start = str(time.time() + 3.0)  # every process starts its load at the same moment
    procs = [subprocess.Popen([sys.executable, str(script), str(hub.root),
                               str(tmp_path / "cache"), str(log), start],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(n)]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        assert out.strip() == "6.0"
    return log.read_text().splitlines()


def test_cold_get_kernel_makes_six_hub_calls(hub: LocalGitHub, tmp_path: Path) -> None:
    calls = [line.split()[1] for line in run_workers(hub, tmp_path, 1)]
    # read_file: the commit's kernel-status.toml (a redirect?), once per commit; the last one:
    # the variant's signature file build/<variant>.kksig, recorded for offline checks
    assert calls == ["list_refs", "read_file", "list_dirs", "list_files", "fetch", "read_file"]
    # warm: the second load (new process) asks the hub nothing: the moving branch v1 is checked
    # against the recorded listing by the hub directory's refs stamp (a few stats, no git)
    warm = [line.split()[1] for line in run_workers(hub, tmp_path, 1)][len(calls):]
    assert warm == []


def test_eight_processes_one_download(hub: LocalGitHub, tmp_path: Path) -> None:
    lines = run_workers(hub, tmp_path, 8)
    fetches = [line for line in lines if line.endswith(" fetch")]
    assert len(fetches) == 1, lines
    variant_dirs = list(RepoCache.of(tmp_path / "cache", "acme/scale", hub.hub_identity).root.glob(
        "*/build/*/metadata.json"))
    assert len(variant_dirs) == 1


def test_offline_selection_from_cached_refs(tmp_path: Path) -> None:
    from kernelkit.hub.port import Refs
    from kernelkit.loader.cache import RepoCache

    cache = tmp_path / "cache"
    a, b = "a" * 40, "b" * 40
    rc = RepoCache.of(cache, REPO, "local:/hub")
    record_refs(rc, Refs(branches={"v1": a, "main": b}, tags={"v1.0.0": a, "v1.1.0": b}))
    (rc.commit_dir(a) / "build").mkdir(parents=True)  # only a is cached
    assert select_offline(rc, version=">=1,<2").commit == a  # v1.1.0 is not cached
    assert select_offline(rc, version=1).commit == a
    assert select_offline(rc, revision="v1.0.0").commit == a
    with pytest.raises(OfflineError, match="revision 'main' of acme/scale is not in the local "
                       "cache") as info:
        select_offline(rc, revision="main")
    # acme is not a trusted publisher: the call that loads it says so
    assert ('kernelkit.get_kernel("acme/scale", revision="main", trust_remote_code=True)'
            in str(info.value))
