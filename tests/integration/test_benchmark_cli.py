"""``kernelkit benchmark`` end to end on synthetic (pure-Python, real-loader) kernels: wrong
results, unverified cases, --compare against a hub version, hub kernels and their scripts,
trust, --save, upload carrying results, and ``kernelkit info`` showing them. The run on a
compiled kernel is tests/integration/test_benchmark_img2gray.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from kernelkit.hub.local import LocalGitHub
from tests.helpers import make_bench_project

FAST = ["--min-time", "0.02", "--max-time", "0.5", "--no-compile", "--no-roofline"]


def kk(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run([sys.executable, "-m", "kernelkit", *args], capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, timeout=300)


def test_wrong_result_is_reported_and_never_timed(tmp_path: Path) -> None:
    project = make_bench_project(tmp_path / "p", factor=3.0)  # scale() is wrong: x * 3
    calls = tmp_path / "calls.log"
    out = kk("benchmark", str(project), *FAST, "--json", env={"BENCH_CALLS_LOG": str(calls)})
    assert out.returncode == 1, out.stderr
    data = json.loads(out.stdout)
    case = next(c for c in data["cases"] if c["case"] == "scale")
    assert case["status"] == "wrong"
    assert case["verification"]["passed"] is False
    assert " of 4096 elements differ from the reference beyond atol=0.01" \
        in case["verification"]["detail"]
    assert case["series"]["kernel"]["status"] == "wrong"
    assert "stats" not in case["series"]["kernel"] and "reference" not in case["series"]
    # the one call that produced the result that was checked, and no other
    assert calls.read_text().split().count("scale") == 1
    # the case without a verify_ method is timed, and marked as not verified
    unchecked = next(c for c in data["cases"] if c["case"] == "unchecked")
    assert unchecked["status"] == "unverified" and unchecked["verification"] is None
    assert unchecked["series"]["kernel"]["stats"]["n"] >= 25
    assert "ScaleBenchmark.scale: WRONG RESULT, not timed" in out.stderr
    assert data["summary"]["wrong"] == 1 and data["summary"]["unverified"] == 1


def test_correct_kernel_is_verified_timed_and_placed_on_the_roofline(tmp_path: Path) -> None:
    project = make_bench_project(tmp_path / "p")
    fast = [a for a in FAST if a != "--no-roofline"]
    out = kk("benchmark", str(project), *fast, "--case", "*.scale", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    [case] = data["cases"]
    assert case["status"] == "ok" and case["verification"]["passed"] is True
    kernel, ref = case["series"]["kernel"], case["series"]["reference"]
    assert kernel["timing"]["method"] == "perf-counter"
    assert kernel["timing"]["clock"] == "time.perf_counter_ns"
    assert kernel["stats"]["ci_low_ms"] <= kernel["stats"]["median_ms"] \
        <= kernel["stats"]["ci_high_ms"]
    assert len(kernel["samples_ms"]) == kernel["stats"]["n"]
    assert ref["status"] == "timed" and "compiled" not in case["series"]  # --no-compile
    sp = case["speedups"]["reference"]
    assert sp["ci_low"] <= sp["value"] <= sp["ci_high"] and sp["method"] == "bootstrap-percentile"
    assert set(data["hardware"]["roofs"]) == {"copy-bandwidth", "matmul"}
    assert case["roofline"]["bandwidth_fraction"] > 0
    assert case["roofline"]["intensity"] == 64 * 64 / (2 * 64 * 64 * 4)
    assert data["kernel"]["source"] == "local" and data["kernel"]["variant"] == "torch-cpu"
    assert data["scripts"][0]["path"] == "benchmarks/benchmark_scale.py"


def _publish(hub_dir: Path, project: Path, *extra: str) -> None:
    out = kk("upload", str(project), "--hub", str(hub_dir), *extra)
    assert out.returncode == 0, out.stderr


def test_compare_with_a_hub_version_and_benchmark_a_hub_kernel(tmp_path: Path) -> None:
    hub_dir = tmp_path / "hub"
    old = make_bench_project(tmp_path / "old", uid="old0001")
    _publish(hub_dir, old)
    project = make_bench_project(tmp_path / "new", uid="new0002")
    refused = kk("benchmark", str(project), *FAST, "--compare", "v1", "--hub", str(hub_dir))
    assert refused.returncode == 6 and "trusted publisher" in refused.stderr
    out = kk("benchmark", str(project), *FAST, "--case", "*.scale", "--compare", "v1",
             "--hub", str(hub_dir), "--trust-remote-code", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["compare"]["source"] == "hub" and data["compare"]["revision"] == "v1"
    [case] = data["cases"]
    assert case["series"]["compare"]["status"] == "timed"
    assert {"reference", "compare"} <= set(case["speedups"])
    # the hub version itself: kernel and scripts from the same commit
    hub = LocalGitHub(hub_dir)
    commit = hub.list_refs("acme/scale").branches["v1"]
    out = kk("benchmark", "acme/scale@v1", *FAST, "--hub", str(hub_dir), "--trust-remote-code",
             "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert (data["kernel"]["source"], data["kernel"]["commit"]) == ("hub", commit)
    assert {c["name"] for c in data["cases"]} == {"ScaleBenchmark.scale",
                                                   "ScaleBenchmark.unchecked"}


def test_save_upload_and_info_carry_the_results(tmp_path: Path) -> None:
    hub_dir = tmp_path / "hub"
    project = make_bench_project(tmp_path / "p")
    out = kk("benchmark", str(project), *FAST, "--save")
    assert out.returncode == 0, out.stderr
    saved = project / "benchmarks" / "results" / "torch-cpu"
    assert (saved / "benchmark.json").is_file() and (saved / "benchmark-bars-dark.svg").is_file()
    local = json.loads(kk("info", str(project), "--json").stdout)
    assert local["benchmarks"][0]["variant"] == "torch-cpu"
    _publish(hub_dir, project)
    hub = LocalGitHub(hub_dir)
    commit = hub.list_refs("acme/scale").branches["v1"]
    files = {f.path for f in hub.list_files("acme/scale", commit, "benchmarks")}
    assert {"benchmarks/benchmark_scale.py", "benchmarks/results/torch-cpu/benchmark.json",
            "benchmarks/results/torch-cpu/benchmark-bars-light.png"} <= files
    human = kk("info", "acme/scale", "--hub", str(hub_dir)).stdout
    assert "Benchmarks:" in human and "ScaleBenchmark.scale:" in human
    assert "x vs reference [" in human
    # results of another build of the variant stay behind (and say so), and the hub's go
    make_bench_project(project, uid="rebuilt")
    out = kk("upload", str(project), "--hub", str(hub_dir))
    assert out.returncode == 0 and "benchmark results of another build" in out.stderr
    commit = hub.list_refs("acme/scale").branches["v1"]
    assert not [f for f in hub.list_files("acme/scale", commit, "benchmarks")
                if "results" in f.path]


def test_no_scripts_and_bad_scripts_are_clear_errors(tmp_path: Path) -> None:
    project = make_bench_project(tmp_path / "p")
    (project / "benchmarks" / "benchmark_scale.py").unlink()
    out = kk("benchmark", str(project))
    assert out.returncode == 3 and "has no benchmark scripts" in out.stderr
    assert "Traceback" not in out.stderr
    (project / "benchmarks" / "benchmark_broken.py").write_text("import not_a_module_here\n")
    out = kk("benchmark", str(project))
    assert out.returncode == 8 and "benchmark_broken.py" in out.stderr
    assert "ModuleNotFoundError" in out.stderr and "Traceback" not in out.stderr
    out = kk("benchmark", str(tmp_path / "no-such-project"))
    assert out.returncode == 2 and "no such directory, and not a repository id" in out.stderr
