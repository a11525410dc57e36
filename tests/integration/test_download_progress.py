"""Download progress against a real local git hub: a variant with a 20 MiB file reports growing
bytes and a finished status; small variants, ``KERNELKIT_PROGRESS=0`` and cached loads report
nothing; the watcher thread is gone after every fetch, failed ones included."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest

from kernelkit.artifact.layout import seal_variant
from kernelkit.artifact.metadata import Metadata
from kernelkit.errors import HubError
from kernelkit.hub.local import LocalGitHub
from kernelkit.hub.port import FileEntry
from kernelkit.loader import api
from kernelkit.loader.cache import RepoCache
from kernelkit.loader.install import download_variant
from kernelkit.loader.progress import (
    THREAD_NAME,
    DownloadStatus,
    ProgressPlan,
    use_progress_reporter,
)
from kernelkit.variants.host import detect_system
from tests.helpers import build_files, make_variant

HOST = detect_system().arch_variant() or "torch-cpu"
BIG = 20 * 2**20


def publish(hub: LocalGitHub, tmp: Path, repo_id: str, big: bool) -> str:
    build = tmp / f"build-{uuid.uuid4().hex[:8]}"
    vdir = make_variant(build, HOST)
    if big:
        (vdir / "weights.bin").write_bytes(os.urandom(BIG))
        seal_variant(vdir, Metadata.read(vdir / "metadata.json"))
    files = build_files(build)
    return hub.publish(repo_id, "main", files, delete_prefixes=("build/",))


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One hub for the module (hashing 20 MiB once): ``org/big`` and ``org/small``."""
    tmp = tmp_path_factory.mktemp("progress-hub")
    hub = LocalGitHub(tmp / "hub")
    return {"hub": hub, "big": publish(hub, tmp, "org/big", big=True),
            "small": publish(hub, tmp, "org/small", big=False)}


def watcher_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == THREAD_NAME]


def check_reports(seen: list[DownloadStatus], total: int) -> None:
    done = [s.done_bytes for s in seen]
    assert done == sorted(done)
    assert [s.finished for s in seen] == [False] * (len(seen) - 1) + [True]
    assert not seen[-1].failed and seen[-1].done_bytes == seen[-1].total_bytes == total
    assert all(s.total_bytes == total for s in seen)


def test_a_big_variant_reports_its_bytes(hub: dict[str, Any], tmp_path: Path) -> None:
    real: LocalGitHub = hub["hub"]
    rc = RepoCache.of(tmp_path / "cache", "org/big", real.hub_identity)
    total = sum(e.size for e in real.list_files("org/big", hub["big"], f"build/{HOST}"))
    assert total > BIG
    seen: list[DownloadStatus] = []
    download_variant(real, rc, hub["big"], HOST,
                     progress=ProgressPlan(seen.append, interval_s=0.001))
    check_reports(seen, total)
    assert seen[-1].label == f"org/big@{hub['big'][:7]} {HOST}"
    assert (rc.variant_dir(hub["big"], HOST) / "weights.bin").stat().st_size == BIG
    assert watcher_threads() == []


def test_install_kernel_reports_to_the_set_reporter_once(hub: dict[str, Any],
                                                         tmp_path: Path) -> None:
    seen: list[DownloadStatus] = []
    with use_progress_reporter(seen.append):
        api.install_kernel("org/big", revision="main", hub=hub["hub"], cache_dir=tmp_path)
        assert seen and seen[-1].finished and seen[-1].done_bytes > BIG
        count = len(seen)
        api.install_kernel("org/big", revision="main", hub=hub["hub"], cache_dir=tmp_path)
    assert len(seen) == count  # a cached variant downloads nothing and reports nothing
    check_reports(seen, seen[-1].total_bytes)
    assert watcher_threads() == []


def test_small_variants_report_nothing_unless_the_threshold_says_so(
        hub: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[DownloadStatus] = []
    with use_progress_reporter(seen.append):
        api.install_kernel("org/small", revision="main", hub=hub["hub"],
                           cache_dir=tmp_path / "a")
        assert seen == []
        monkeypatch.setenv("KERNELKIT_PROGRESS_MIN_BYTES", "0")
        api.install_kernel("org/small", revision="main", hub=hub["hub"],
                           cache_dir=tmp_path / "b")
    assert seen and seen[-1].finished  # the same download reports with a zero threshold


def test_kernelkit_progress_0_reports_nothing(hub: dict[str, Any], tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KERNELKIT_PROGRESS", "0")
    seen: list[DownloadStatus] = []
    with use_progress_reporter(seen.append):
        path = api.install_kernel("org/big", revision="main", hub=hub["hub"],
                                  cache_dir=tmp_path)
    assert (path / "weights.bin").is_file() and seen == []


class MissingFileHub:
    """The real hub, but its listing names one more (big) file than the commit has: the real
    ``fetch`` then fails on it, as a hub whose listing and content disagree would."""

    def __init__(self, inner: LocalGitHub) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def list_files(self, repo_id: str, commit: str, path: str = "") -> list[FileEntry]:
        ghost = FileEntry(f"{path}/zz-missing.bin", BIG, "0" * 40)
        return [*self.inner.list_files(repo_id, commit, path), ghost]


def test_a_failing_fetch_reports_failure_and_stops_the_watcher(hub: dict[str, Any],
                                                               tmp_path: Path) -> None:
    real: LocalGitHub = hub["hub"]
    rc = RepoCache.of(tmp_path / "cache", "org/big", real.hub_identity)
    seen: list[DownloadStatus] = []
    with pytest.raises(HubError, match=r"zz-missing\.bin"):
        download_variant(MissingFileHub(real), rc, hub["big"], HOST,  # type: ignore[arg-type]
                         progress=ProgressPlan(seen.append, interval_s=0.001))
    assert watcher_threads() == []
    assert seen[-1].finished and seen[-1].failed
    assert BIG <= seen[-1].done_bytes < seen[-1].total_bytes  # weights.bin came, the ghost not
    assert not rc.variant_dir(hub["big"], HOST).exists()
    assert [p.name for p in rc.variant_dir(hub["big"], HOST).parent.iterdir()] == []


# --- kernelkit download: rich bars on a terminal, the plain line without rich, quiet in a log ---


@pytest.fixture
def locked_project(tmp_path: Path) -> tuple[Path, LocalGitHub]:
    hub = LocalGitHub(tmp_path / "hub")
    return lock_against(hub, tmp_path, "dl00001"), hub


def lock_against(hub: Any, tmp_path: Path, uid: str) -> Path:
    """Publish ``acme/dl`` v1.0.0 (one small variant) to ``hub`` and a project locked to it."""
    from kernelkit.lock.project import lock_project

    vdir = make_variant(tmp_path / "build", HOST, name="dl", uid=uid)
    files = {f"build/{HOST}/{p.relative_to(vdir).as_posix()}": p
             for p in vdir.rglob("*") if p.is_file()}
    hub.tag("acme/dl", "v1.0.0", hub.publish("acme/dl", "v1", files))
    proj = tmp_path / "app"
    proj.mkdir()
    (proj / "pyproject.toml").write_text(
        '[project]\nname = "app"\n\n[tool.kernels.dependencies]\n"acme/dl" = ">=1"\n')
    lock_project(proj, hub)
    return proj


def download_argv(proj: Path, hub: LocalGitHub, dest: Path) -> list[str]:
    return [sys.executable, "-m", "kernelkit", "download", str(proj), "--dest", str(dest),
            "--hub", str(hub.root)]


def run_in_pty(argv: list[str], env: dict[str, str]) -> tuple[int, str]:
    """Run ``argv`` with a pseudo-terminal as stdin, stdout and stderr; its exit code and all
    it wrote."""
    master, slave = os.openpty()
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return proc.wait(timeout=60), b"".join(chunks).decode(errors="replace")


def test_kernelkit_download_draws_rich_bars_on_a_terminal(
        locked_project: tuple[Path, LocalGitHub], tmp_path: Path) -> None:
    pytest.importorskip("rich")
    proj, hub = locked_project
    env = {**os.environ, "KERNELKIT_PROGRESS_MIN_BYTES": "0", "COLUMNS": "200",
           "TERM": "xterm"}
    code, out = run_in_pty(download_argv(proj, hub, tmp_path / "a"), env)
    assert code == 0, out
    assert "━" in out and "acme/dl@" in out and "downloading acme/dl" not in out
    assert "Downloaded `acme/dl`" in out
    # in a log (no terminal): no drawing, one INFO record (shown by the CLI) at the end
    quiet = subprocess.run(download_argv(proj, hub, tmp_path / "b"), env=env,
                           capture_output=True, text=True, check=True)
    assert "━" not in quiet.stderr and "\r" not in quiet.stderr
    assert "downloading" not in quiet.stderr and quiet.stderr.count("downloaded acme/dl@") == 1
    assert "Downloaded `acme/dl`" in quiet.stderr


def test_kernelkit_download_without_rich_draws_the_plain_line(
        locked_project: tuple[Path, LocalGitHub], tmp_path: Path) -> None:
    proj, hub = locked_project
    no_rich = tmp_path / "no-rich" / "rich"  # stands in for an environment without rich
    no_rich.mkdir(parents=True)
    (no_rich / "__init__.py").write_text('raise ImportError("rich is not installed here")\n')
    path = os.pathsep.join([str(no_rich.parent), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path, "KERNELKIT_PROGRESS_MIN_BYTES": "0",
           "COLUMNS": "200"}
    code, out = run_in_pty(download_argv(proj, hub, tmp_path / "a"), env)
    assert code == 0, out
    assert "━" not in out
    assert re.search(r"\rdownloaded acme/dl@[0-9a-f]{7} \S+: [0-9.]+ MB in [0-9.]+ s", out), out


def test_the_hugging_face_backend_reports_too(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the real ``huggingface_hub`` client against a real ``kernelkit serve``: the
    watcher sees ``snapshot_download``'s files (its ``.incomplete`` and metadata files under the
    staging directory never push the count past the listed total)."""
    pytest.importorskip("huggingface_hub")
    pytest.importorskip("uvicorn")
    from kernelkit.hub import open_hub
    from tests.hubserver import READ_TOKEN, run_server

    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    with run_server(tmp_path / "hub", tmp_path) as srv:
        commit = publish(LocalGitHub(srv.hub_dir), tmp_path, "org/big", big=True)
        hf = open_hub("hf", env={"HF_ENDPOINT": srv.url, "HF_TOKEN": READ_TOKEN})
        rc = RepoCache.of(tmp_path / "cache", "org/big", hf.hub_identity)
        seen: list[DownloadStatus] = []
        download_variant(hf, rc, commit, HOST,
                         progress=ProgressPlan(seen.append, interval_s=0.001))
    total = sum(e.size for e in LocalGitHub(srv.hub_dir).list_files("org/big", commit,
                                                                     f"build/{HOST}"))
    check_reports(seen, total)
    assert any(0 < s.done_bytes < total for s in seen)  # it saw the transfer, not only its end
    assert (rc.variant_dir(commit, HOST) / "weights.bin").stat().st_size == BIG
    assert watcher_threads() == []


def test_kernelkit_download_from_a_git_remote_shows_the_fetch(tmp_path: Path) -> None:
    """``kernelkit download --hub git+file://...``: the command's hub gets the fetch observer
    too; in a log (no terminal) the fetch and the variant each end with one INFO record."""
    from kernelkit.hub.git_remote import GitRemoteHub

    url = f"git+file://{tmp_path / 'remote'}"
    proj = lock_against(GitRemoteHub(url, tmp_path / "publisher"), tmp_path, "dl00002")
    env = {**os.environ, "KERNELKIT_PROGRESS_MIN_BYTES": "0",
           "KERNELKIT_CACHE": str(tmp_path / "fresh-cache")}
    done = subprocess.run([sys.executable, "-m", "kernelkit", "download", str(proj), "--dest",
                           str(tmp_path / "dest"), "--hub", url], env=env,
                          capture_output=True, text=True, check=True)
    assert re.search(r"downloaded acme/dl \(git fetch\)( in |: )[0-9.]+", done.stderr), \
        done.stderr
    assert done.stderr.count("downloaded acme/dl (git fetch)") == 1
    assert done.stderr.count("downloaded acme/dl@") == 1
