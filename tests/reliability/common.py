"""Shared pieces of the reliability suite: the configuration, subprocess helpers, and checks
of a store's invariants (a cache or a hub is in its old or its new state, never in between)."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

from kernelkit.hub.local import LocalGitHub
from tests.helpers import make_variant, publish_build

#: What a run counted, by title (``kill -9 injections``: {"download": 12, ...}), written by
#: the tests and shown after the run by ``pytest_terminal_summary`` in conftest.py.
REPORT: dict[str, dict[str, int]] = {}


def counter(title: str) -> dict[str, int]:
    """The counts shown under ``title`` at the end of the run."""
    return REPORT.setdefault(title, {})

ROOT = Path(__file__).resolve().parents[2]
VARIANT = "torch-cpu"  # a noarch variant name: no torch needed to choose or download it


@dataclass(frozen=True)
class Config:
    name: str
    loaders: int  # processes cold-loading one kernel
    uploaders: int  # concurrent uploads (one repository, and as many repositories)
    injections: int  # kill -9 injections per target (download, build install, upload)
    fuzz_examples: int  # hypothesis examples per fuzz target
    slow_clients: int = 1000  # half-sent requests held open against `kernelkit serve`
    attack_seconds: float = 8.0  # how long those clients attack


SMALL = Config("small (CI)", loaders=6, uploaders=8, injections=8, fuzz_examples=200)
FULL = Config("full", loaders=16, uploaders=16, injections=40, fuzz_examples=3000,
              slow_clients=16000, attack_seconds=20.0)
CONFIG = FULL if os.environ.get("KERNELKIT_RELIABILITY", "").lower() == "full" else SMALL


def child_env(**extra: str) -> dict[str, str]:
    """The environment of a child process: this source tree first on the path."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("KERNELKIT_OFFLINE", "HF_HUB_OFFLINE", "LOCAL_KERNELS", "KERNELKIT_HUB")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), str(ROOT)])
    env.update(extra)
    return env


def python(code: str, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", code], env=child_env(**env),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def kernelkit(*args: str, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "kernelkit", *args], env=child_env(**env),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(proc: subprocess.Popen[str], timeout: float = 300) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


def variant_tree(root: Path, *, version: int = 1, factor: float = 2.0,
                 big: int = 0, uid: str | None = None) -> Path:
    """A sealed synthetic variant under ``root/build``; ``big`` bytes of extra payload make
    downloads and uploads last long enough to be killed in the middle. ``uid`` (default: a
    fresh one) makes the op namespace ``_demo_cpu_<uid>``."""
    vdir = make_variant(root / "build", VARIANT, uid=uid or uuid.uuid4().hex[:7],
                        version=version, factor=factor)
    if big:
        from kernelkit.artifact.layout import seal_variant
        from kernelkit.artifact.metadata import Metadata

        (vdir / "payload.bin").write_bytes(os.urandom(big))
        seal_variant(vdir, Metadata.read(vdir / "metadata.json"))
    return vdir


def publish_tree(hub: LocalGitHub, repo_id: str, branch: str, root: Path) -> str:
    build = root / "build"
    return publish_build(hub, repo_id, branch, build)


def git_fsck(git_dir: Path) -> None:
    proc = subprocess.run(["git", f"--git-dir={git_dir}", "fsck", "--strict", "--no-dangling"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def staging_leftovers(root: Path) -> list[Path]:
    """Temporary siblings (``.<name>.<tag>-<hex>``) anywhere under ``root``. Temporary files
    of the cache's tiny unlocked writes (``variants.json``, ``refs/``) are removed by the next
    write once a minute old, so fresh ones are not counted."""
    import time

    tags = (".fetch-", ".old-", ".incomplete", ".init-", ".tmp-", ".building-")
    found = [p for p in root.rglob(".*") if any(t in p.name for t in tags)]
    return [p for p in found if not ((".variants.json." in p.name or p.parent.name == "refs")
                                     and time.time() - p.lstat().st_mtime < 60)]
