"""``kernelkit benchmark`` on a real CPU build of the img2gray template (the session's shared
compile): its shipped benchmark script runs unchanged, every case is verified, the kernel,
the eager reference and torch.compile of it are timed, the results follow the documented
JSON schema, and the charts are written (PNG and SVG, light and dark)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROLES = {"kernel", "reference", "compiled"}


def test_benchmark_img2gray_cpu_build(img2gray_project: Path, img2gray_cpu_build: Path,
                                      tmp_path: Path) -> None:
    assert (img2gray_project / "benchmarks" / "benchmark_img2gray.py").is_file()  # template
    results, plots = tmp_path / "results.json", tmp_path / "plots"
    out = subprocess.run(
        [sys.executable, "-m", "kernelkit", "benchmark", str(img2gray_project), "--min-time",
         "0.05", "--max-time", "1", "--output", str(results), "--plot", str(plots)],
        capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert "[2/2] Img2grayBenchmark.small: ok" in out.stderr  # progress
    assert "Img2grayBenchmark.large  verified" in out.stdout  # the table
    data = json.loads(results.read_text())
    check_schema(data, img2gray_cpu_build)
    for case in data["cases"]:
        assert case["status"] == "ok" and case["verification"]["passed"] is True
        assert case["verification"]["max_abs_error"] == 0.0  # uint8: bit-exact
        assert set(case["series"]) == ROLES
        compiled = case["series"]["compiled"]
        assert compiled["status"] == "timed" or compiled["reason"], compiled
        for role, s in case["series"].items():
            if s["status"] == "timed":
                st = s["stats"]
                assert st["min_ms"] <= st["ci_low_ms"] <= st["median_ms"] <= st["ci_high_ms"]
                assert st["q1_ms"] <= st["median_ms"] <= st["q3_ms"]
                assert st["n"] >= 25 or sum(s["samples_ms"]) >= 800  # or --max-time
                assert s["timing"]["warmup"]["calls"] >= 1
                if role != "kernel":
                    sp = case["speedups"][role]
                    assert sp["ci_low"] <= sp["value"] <= sp["ci_high"]
        assert case["work"]["bytes"] > 0 and case["roofline"]["bandwidth_fraction"] > 0
    names = sorted(p.name for p in plots.iterdir())
    assert names == sorted(f"benchmark-{kind}-{theme}.{fmt}" for kind in ("bars", "roofline")
                           for theme in ("dark", "light") for fmt in ("png", "svg"))
    for png in plots.glob("*.png"):
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    assert "<svg" in (plots / "benchmark-bars-light.svg").read_text()


def check_schema(data: dict, variant_dir: Path) -> None:  # type: ignore[type-arg]
    """The top level of schema kernelkit.benchmark/1 (docs/benchmark.md)."""
    assert data["schema"] == "kernelkit.benchmark/1"
    assert set(data) == {"schema", "created", "kernelkit", "machine", "kernel", "compare",
                         "settings", "scripts", "hardware", "cases", "summary"}
    m = data["machine"]
    assert m["torch"].startswith("2.") and m["device"]["type"] == "cpu" and m["python"]
    k = data["kernel"]
    assert (k["source"], k["variant"], k["path"]) == ("local", variant_dir.name,
                                                      str(variant_dir.resolve()))
    assert k["name"] == "img2gray" and k["version"] == 1 and len(k["metadata_sha256"]) == 64
    assert k["revision"] and k["repo_id"] == "kernelkit-examples/img2gray"
    assert data["settings"]["device"] == "cpu" and data["settings"]["confidence"] == 0.95
    assert data["scripts"] == [{"path": "benchmarks/benchmark_img2gray.py",
                                "sha256": data["scripts"][0]["sha256"]}]
    roofs = data["hardware"]["roofs"]
    assert roofs["copy-bandwidth"]["unit"] == "B/s" and roofs["matmul"]["unit"] == "FLOP/s"
    assert [c["name"] for c in data["cases"]] == ["Img2grayBenchmark.large",
                                                  "Img2grayBenchmark.small"]
    assert data["summary"] == {"cases": 2, "ok": 2, "unverified": 0, "wrong": 0, "error": 0}
