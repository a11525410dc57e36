"""kernels.lock both ways: upstream's reader on kernelkit's lock files and kernelkit's on
upstream's, ``kernels lock`` and ``kernelkit lock`` writing the same file, and each tool's
``download`` + ``load_kernel`` on the other's lock, through ``kernelkit serve``."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from kernelkit.lock.lockfile import KernelLock, VariantLock, dumps_locks, parse_lock_file
from tests.conformance.support import CHECK_IMG2GRAY, REPO_ID, Served, kernelkit_run
from tests.upstream_envs import UpstreamEnv

pytestmark = pytest.mark.slow  # the session's compiled img2gray build

LEGACY = Path(__file__).parents[1] / "data" / "lock" / "kernelkit-previous.lock"

# Upstream's own reader: (repo id, version | revision, commit) of every entry, sorted.
READ = """
import json, sys
from kernels._rust import KernelLocks
locks = KernelLocks.from_json(sys.stdin.read())
out = []
for dep, lock in locks.items():
    v = dep.version
    out.append([dep.repo_id, getattr(v, "version", None), getattr(v, "revision", None),
                str(lock.commit)])
print(json.dumps(sorted(out, key=str)))
"""

# Upstream's own writer, for the entries given on stdin.
WRITE = """
import json, sys
from kernels._rust import KernelDependency, KernelLock, KernelLocks, KernelVersion
locks = {}
for repo, version, revision, commit in json.load(sys.stdin):
    v = KernelVersion.Version(version) if version is not None else KernelVersion.Revision(revision)
    locks[KernelDependency(repo, v)] = KernelLock(commit)
print(KernelLocks(locks).to_json(), end="")
"""

LOCKS = [
    KernelLock("acme/relu", "1" * 40, {"torch-cpu": VariantLock("sha256-" + "a" * 64)},
               version=1),
    KernelLock("acme/gemm", "2" * 40, {}, revision="v1.2.0"),
    KernelLock("kernels-community/activation", "3" * 64, {}, version=0),
]


def test_their_reader_reads_our_lock_and_refuses_our_old_one(upstream: UpstreamEnv) -> None:
    """Row "kernels.lock written by kernelkit": both releases parse it to the same entries
    (kernelkit's hashes are in the sidecar, which upstream never opens); kernelkit's previous
    format is refused by both, which is why it changed, and so is any extra field, which is why
    the hashes live in a file of their own."""
    proc = upstream.run_stdin(READ, dumps_locks(LOCKS))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == sorted(
        ([lock.repo_id, lock.version, lock.revision, lock.sha] for lock in LOCKS), key=str)
    old = upstream.run_stdin(READ, LEGACY.read_text())
    assert old.returncode != 0 and "unknown field `repo_id`" in old.stderr
    # nor is there room for the hashes inside kernels.lock: an extra field at any level fails
    entry = json.loads(dumps_locks(LOCKS[:1]))[0]
    for where in (entry, entry["dependency"], entry["lock"]):
        where["variants"] = {}
        extra = upstream.run_stdin(READ, json.dumps([entry]))
        assert extra.returncode != 0 and "unknown field `variants`" in extra.stderr
        del where["variants"]


def test_our_reader_reads_their_lock(upstream: UpstreamEnv) -> None:
    """Row "kernels.lock written by upstream": kernelkit reads what upstream's writer produces
    and writes the same bytes back."""
    entries = [[lock.repo_id, lock.version, lock.revision, lock.sha] for lock in LOCKS]
    proc = upstream.run_stdin(WRITE, json.dumps(entries))
    assert proc.returncode == 0, proc.stderr
    locks, legacy = parse_lock_file(proc.stdout, f"kernels {upstream.version}")
    assert not legacy
    assert sorted(locks, key=lambda lock: lock.repo_id) == sorted(
        (KernelLock(lock.repo_id, lock.sha, {}, lock.version, lock.revision) for lock in LOCKS),
        key=lambda lock: lock.repo_id)
    assert dumps_locks(locks) == proc.stdout


def _project(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "pyproject.toml").write_text(
        f'[project]\nname = "app"\nversion = "0"\n\n[tool.kernels.dependencies]\n'
        f'"{REPO_ID}" = 1\n')
    return root


UPSTREAM_LOAD = CHECK_IMG2GRAY + textwrap.dedent("""
    from pathlib import Path
    import kernels
    check(kernels.load_kernel({repo!r}, lockfile=Path({lock!r})))
""")
KERNELKIT_LOAD = CHECK_IMG2GRAY + textwrap.dedent("""
    from pathlib import Path
    import kernelkit
    check(kernelkit.load_kernel({repo!r}, lockfile=Path({lock!r})))
""")


@pytest.fixture(scope="module")
def our_lock(served: Served, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``kernelkit lock`` of a project depending on the served img2gray (``= 1``)."""
    from kernelkit.hub.hf import HuggingFaceHub
    from kernelkit.lock.project import lock_project

    proj = _project(tmp_path_factory.mktemp("conformance-lock") / "ours")
    lock_project(proj, HuggingFaceHub(endpoint=served.server.url))
    return proj


def test_lock_files_are_the_same_and_kernelkit_loads_theirs(
        upstream: UpstreamEnv, served: Served, our_lock: Path, tmp_path: Path) -> None:
    """Rows "kernels lock = kernelkit lock" and "kernelkit download + load_kernel on upstream's
    lock": through ``kernelkit serve`` (Hub API) both write the same ``kernels.lock`` bytes;
    kernelkit downloads and loads (offline) from upstream's file, which pins the commit only,
    so the variant is held to its digest."""
    from kernelkit.hub.hf import HuggingFaceHub
    from kernelkit.lock.download import download_locked

    env = served.env(tmp_path)
    theirs = _project(tmp_path / "theirs")
    done = upstream.cli("lock", str(theirs), env=env)
    assert done.returncode == 0, done.stderr
    assert (theirs / "kernels.lock").read_text() == (our_lock / "kernels.lock").read_text()
    [entry] = json.loads((theirs / "kernels.lock").read_text())
    assert entry["lock"]["commit"] == served.commit
    assert (our_lock / "kernels.lock.hashes").is_file()
    assert not (theirs / "kernels.lock.hashes").exists()
    [got] = download_locked(theirs, HuggingFaceHub(endpoint=served.server.url),
                            tmp_path / "kk-cache")
    assert got.sha == served.commit
    load = kernelkit_run(KERNELKIT_LOAD.format(repo=REPO_ID, lock=str(theirs / "kernels.lock")),
                         env=env | {"KERNELKIT_OFFLINE": "1"})
    assert "CONFORMANCE-OK" in load.stdout, load.stderr


def test_upstream_downloads_and_loads_from_our_lock(upstream: UpstreamEnv, served: Served,
                                                    our_lock: Path, tmp_path: Path) -> None:
    """Row "upstream download + load_kernel on kernelkit's lock": ``kernels download`` on the
    project kernelkit locked, then ``kernels.load_kernel`` offline."""
    env = served.env(tmp_path)
    done = upstream.cli("download", str(our_lock), env=env)
    assert done.returncode == 0, done.stderr
    load = upstream.run(UPSTREAM_LOAD.format(repo=REPO_ID, lock=str(our_lock / "kernels.lock")),
                        env=env | {"HF_HUB_OFFLINE": "1"})
    assert "CONFORMANCE-OK" in load.stdout, load.stderr
