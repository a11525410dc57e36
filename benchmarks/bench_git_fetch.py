"""A git remote's cold fetch: kernelkit's mirror refresh against plain ``git fetch``.

A kernel repository with one variant holding ``--mb`` MB of incompressible data (a stand-in for a
large ``.so``) is published to a ``file://`` remote. Then, taking turns ``--repeat`` times, each
into an empty mirror:

* ``git_default``: ``git fetch`` as git does it by default (a fetch of fewer than 100 objects is
  unpacked into loose objects, each compressed again);
* ``kernelkit_quiet``: ``GitRemoteHub.refresh`` (``fetch.unpackLimit=1``: the pack is kept);
* ``kernelkit_progress``: the same with the loader's fetch observer (``--progress``, git's lines
  parsed, a reporter called), so the cost of showing progress can be read off.

Writes ``benchmarks/results/git_fetch.json`` (medians, samples, ratios to ``git_default``).
Run: ``.venv/bin/python benchmarks/bench_git_fetch.py [--mb 25] [--repeat 5]``.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from results_io import write_results  # noqa: E402  (benchmarks/, this script's folder)

from kernelkit.hub.git_remote import GitRemoteHub  # noqa: E402
from kernelkit.loader.progress import FetchReporter, ProgressPlan  # noqa: E402

REPO = "bench/fetch"


def publish(remote: str, work: Path, mb: int) -> None:
    src = work / "src"
    src.mkdir()
    big, meta = src / "weights.bin", src / "metadata.json"
    big.write_bytes(os.urandom(mb * 1_000_000))
    meta.write_text('{"version": 1}\n')
    variant = "build/torch-universal"
    GitRemoteHub(remote, work / "publisher").publish(
        REPO, "main", {f"{variant}/weights.bin": big, f"{variant}/metadata.json": meta})


def git_default(url: str, mirror: Path) -> float:
    subprocess.run(["git", "init", "-q", "--bare", str(mirror)], check=True)
    started = time.perf_counter()
    subprocess.run(["git", f"--git-dir={mirror}", "fetch", "--quiet", "--no-write-fetch-head",
                    url, "+refs/heads/*:refs/heads/*"], check=True)
    return time.perf_counter() - started


def kernelkit(remote: str, cache: Path, progress: bool) -> tuple[float, int]:
    hub = GitRemoteHub(remote, cache)
    reports: list[object] = []
    if progress:
        hub.fetch_observer = FetchReporter(lambda: ProgressPlan(reports.append, min_bytes=0,
                                                                interval_s=0.0))
    started = time.perf_counter()
    hub.refresh(REPO, force=True)
    return time.perf_counter() - started, len(reports)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=25)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "git_fetch.json")
    opts = parser.parse_args()
    samples: dict[str, list[float]] = {"git_default": [], "kernelkit_quiet": [],
                                       "kernelkit_progress": []}
    reports = 0
    with tempfile.TemporaryDirectory(prefix="kk-git-fetch-") as tmp:
        work = Path(tmp)
        remote = f"git+file://{work / 'remote'}"
        publish(remote, work, opts.mb)
        url = GitRemoteHub(remote, work / "x").remote_url(REPO)
        for turn in range(opts.repeat):
            samples["git_default"].append(git_default(url, work / f"plain{turn}.git"))
            samples["kernelkit_quiet"].append(kernelkit(remote, work / f"q{turn}", False)[0])
            seconds, reports = kernelkit(remote, work / f"p{turn}", True)
            samples["kernelkit_progress"].append(seconds)
    medians = {k: round(statistics.median(v), 3) for k, v in samples.items()}
    results = {
        "machine": {"cores": os.cpu_count(), "python": platform.python_version(),
                    "git": subprocess.run(["git", "--version"], capture_output=True,
                                          text=True).stdout.strip()},
        "variant_mb": opts.mb,
        "median_s": medians,
        "samples_s": {k: [round(x, 3) for x in v] for k, v in samples.items()},
        "progress_reports_last_turn": reports,
        "ratios": {k: round(v / medians["git_default"], 3) for k, v in medians.items()},
    }
    return write_results(results, opts.out)


if __name__ == "__main__":
    sys.exit(main())
