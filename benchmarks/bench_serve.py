"""``kernelkit serve`` under a bounded loopback load, side by side with a static file server.

One run, same machine, same files:

* **serve, huggingface_hub**: concurrent one-variant downloads through the real client
  (``snapshot_download(repo, revision="v1", allow_patterns=["build/<variant>/*"])``, each into
  a fresh cache, so every download really resolves, lists and fetches); downloads/s, the HTTP
  requests/s they make, and p50/p99 latency of a whole download.
* **serve, plain GETs** vs **static, plain GETs**: the same client (``http.client``, one
  keep-alive connection per worker) fetching the variant's files from ``kernelkit serve``
  (``/kernels/<repo>/resolve/v1/<path>``: ref resolution, tree lookup, ETag, streamed file)
  and from Python's ``http.server.ThreadingHTTPServer`` serving the same bytes from a
  directory; requests/s, MB/s, p50/p99 latency per request.

Both servers run as separate processes, without access logs. Each measurement runs
``--rounds`` times (serve and static interleaved) and the best round is reported, with every
round's requests/s alongside (the machine is shared, so single rounds are noisy). The variant
is the synthetic test variant plus a 2 MiB binary standing in for the compiled ``.so``.

Writes ``benchmarks/results/serve.json``. Run: ``.venv/bin/python benchmarks/bench_serve.py``.
"""

from __future__ import annotations

import argparse
import http.client
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from results_io import write_results

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.helpers / tests.hubserver
sys.path.insert(0, str(ROOT / "src"))

REPO = "bench/demo"
VARIANT = "torch213-cxx11-cpu-x86_64-linux"
TOKEN = "bench-write-token"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


def summary(latencies: list[float], elapsed: float, nbytes: int = 0) -> dict[str, Any]:
    out = {"requests": len(latencies), "seconds": round(elapsed, 3),
           "requests_per_s": round(len(latencies) / elapsed, 1),
           "p50_ms": round(percentile(latencies, 50) * 1000, 2),
           "p99_ms": round(percentile(latencies, 99) * 1000, 2)}
    if nbytes:
        out["mb_per_s"] = round(nbytes / elapsed / 1e6, 1)
    return out


def start(argv: list[str], url: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    import urllib.request

    for _ in range(300):
        try:
            urllib.request.urlopen(url, timeout=1)
            return proc
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit(f"server did not start: {argv}")


def publish(hub_dir: Path, tmp: Path) -> dict[str, bytes]:
    """Publish the variant to a local hub directory; return repo path -> bytes."""
    from kernelkit.artifact.layout import seal_variant
    from kernelkit.artifact.metadata import Metadata
    from kernelkit.hub.local import LocalGitHub
    from kernelkit.publish.upload import upload
    from tests.helpers import make_variant

    vdir = make_variant(tmp / "build", VARIANT)
    (vdir / "_kernel.bin").write_bytes(os.urandom(2 << 20))
    (vdir / "metadata.json").unlink()
    seal_variant(vdir, Metadata(name="demo", id="_demo_cpu_abc1234", version=1,
                                license="Apache-2.0", backend="cpu"))
    upload(tmp / "build", LocalGitHub(hub_dir), repo_id=REPO)
    return {f"build/{VARIANT}/{p.name}": p.read_bytes() for p in vdir.iterdir() if p.is_file()}


def get_load(host: str, port: int, paths: list[str], total: int,
             workers: int) -> tuple[list[float], float, int]:
    """``total`` GETs spread over ``workers`` keep-alive connections."""
    latencies: list[float] = []
    nbytes = [0]
    lock = threading.Lock()

    def worker(index: int) -> None:
        conn = http.client.HTTPConnection(host, port, timeout=60)
        mine, got = [], 0
        for i in range(index, total, workers):
            t0 = time.perf_counter()
            conn.request("GET", paths[i % len(paths)])
            resp = conn.getresponse()
            data = resp.read()
            mine.append(time.perf_counter() - t0)
            assert resp.status == 200, (resp.status, paths[i % len(paths)])
            got += len(data)
        conn.close()
        with lock:
            latencies.extend(mine)
            nbytes[0] += got

    t0 = time.perf_counter()
    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(worker, range(workers)))
    return latencies, time.perf_counter() - t0, nbytes[0]


def hf_downloads(url: str, total: int, workers: int, tmp: Path,
                 expected: dict[str, bytes]) -> tuple[list[float], float]:
    from huggingface_hub import HfApi

    api = HfApi(endpoint=url, token=False)

    def one(i: int) -> float:
        t0 = time.perf_counter()
        snap = api.snapshot_download(REPO, repo_type="kernel", revision="v1",
                                     allow_patterns=[f"build/{VARIANT}/*"],
                                     cache_dir=str(tmp / f"hf-cache-{i}"))
        elapsed = time.perf_counter() - t0
        if i == 0:
            for path, data in expected.items():
                assert (Path(snap) / path).read_bytes() == data, path
        return elapsed

    t0 = time.perf_counter()
    with ThreadPoolExecutor(workers) as pool:
        latencies = list(pool.map(one, range(total)))
    return latencies, time.perf_counter() - t0


def run(args: argparse.Namespace) -> dict[str, Any]:
    from tests.hubserver import free_port

    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}",
           "HF_HUB_DISABLE_PROGRESS_BARS": "1"}
    os.environ.update(HF_HUB_DISABLE_PROGRESS_BARS="1")
    with tempfile.TemporaryDirectory(prefix="bench-serve-") as tmp_name:
        tmp = Path(tmp_name)
        files = publish(tmp / "hub", tmp)
        static_root = tmp / "static"
        for path, data in files.items():
            (static_root / path).parent.mkdir(parents=True, exist_ok=True)
            (static_root / path).write_bytes(data)
        sport, tport = free_port(), free_port()
        (tmp / "tokens").write_text(TOKEN + "\n")
        serve = start([sys.executable, "-m", "kernelkit", "serve", "--hub", str(tmp / "hub"),
                       "--port", str(sport), "--no-access-log", "--token-file",
                       str(tmp / "tokens")], f"http://127.0.0.1:{sport}/api/kernels/{REPO}/refs",
                      env)
        static = start([sys.executable, "-m", "http.server", str(tport), "--bind", "127.0.0.1",
                        "--directory", str(static_root)], f"http://127.0.0.1:{tport}/", env)
        try:
            paths = sorted(files)
            serve_paths = [f"/kernels/{REPO}/resolve/v1/{p}" for p in paths]
            static_paths = [f"/{p}" for p in paths]
            get_load("127.0.0.1", sport, serve_paths, 4 * len(paths), 2)  # warm up both
            get_load("127.0.0.1", tport, static_paths, 4 * len(paths), 2)
            results: dict[str, Any] = {}
            rounds: dict[str, list[dict[str, Any]]] = {"serve_get": [], "static_get": []}
            for _ in range(args.rounds):  # interleaved, so both see the same machine load
                for name, port, ps in (("serve_get", sport, serve_paths),
                                       ("static_get", tport, static_paths)):
                    lat, elapsed, nbytes = get_load("127.0.0.1", port, ps, args.requests,
                                                    args.workers)
                    rounds[name].append(summary(lat, elapsed, nbytes))
            for name, runs in rounds.items():
                results[name] = max(runs, key=lambda r: r["requests_per_s"])
                results[name]["rounds_requests_per_s"] = [r["requests_per_s"] for r in runs]
            dls = [hf_downloads(f"http://127.0.0.1:{sport}", args.downloads, args.workers,
                                tmp / f"round-{i}", files) for i in range(args.rounds)]
            dl = max((summary(lat, elapsed) for lat, elapsed in dls),
                     key=lambda r: r["requests_per_s"])
            results["serve_hf_download"] = {
                "downloads": dl["requests"], "seconds": dl["seconds"],
                "downloads_per_s": dl["requests_per_s"], "p50_ms": dl["p50_ms"],
                "p99_ms": dl["p99_ms"]}
        finally:
            for proc in (serve, static):
                proc.terminate()
                proc.wait(timeout=30)
    s, t = results["serve_get"], results["static_get"]
    return {
        "machine": {"python": platform.python_version(), "platform": platform.platform(),
                    "cpus": os.cpu_count(), "note": "loopback; client and both servers share "
                    "the machine's CPUs with other work, so treat numbers as rough"},
        "config": {"workers": args.workers, "get_requests": args.requests,
                   "rounds": args.rounds, "reported": "the best round of each",
                   "hf_downloads": args.downloads, "variant_files": len(files),
                   "variant_bytes": sum(len(d) for d in files.values())},
        **results,
        "ratio_serve_over_static_requests_per_s": round(s["requests_per_s"] / t["requests_per_s"],
                                                        2),
        "ratio_serve_over_static_p99": round(s["p99_ms"] / t["p99_ms"], 2),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--workers", type=int, default=8, help="concurrent clients (default 8)")
    p.add_argument("--requests", type=int, default=800, help="GETs per server (default 800)")
    p.add_argument("--downloads", type=int, default=64,
                   help="huggingface_hub one-variant downloads (default 64)")
    p.add_argument("--rounds", type=int, default=3,
                   help="rounds per measurement; the best round is reported (default 3)")
    p.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "serve.json")
    args = p.parse_args(argv)
    result = run(args)
    return write_results(result, args.out)


if __name__ == "__main__":
    sys.exit(main())
