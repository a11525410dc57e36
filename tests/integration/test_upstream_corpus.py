"""A representative subset of upstream's example projects, through the kernelkit CLI as a user
runs it: ``kernelkit build``, ``kernelkit check`` and ``kernelkit test`` (the project's own test
suite, unchanged), on copies committed to fresh git repositories.

Covered here: ``cpp20-symbols`` (newer libstdc++ symbols vs manylinux_2_28), ``extra-data``
(data files shipped in the variant), ``relu-compiler-flags``, ``relu-torch-bounds`` and
``relu-archs-subset`` (CUDA/ROCm only: on a CPU torch the plan and the refusals are asserted,
on a CUDA torch they are built, checked and tested for real).

Not repeated here, because other files already build them: noarch (``relu-triton``,
``silu-and-mul``, ``gemm-triton-autotune``) in ``test_upstream_noarch.py``; the torch stable
ABI (``relu-torch-stable-abi``) and tvm-ffi (``relu-tvm-ffi``) in ``test_stable_abi_tvm_ffi.py``.
The whole corpus, with a table, is ``benchmarks/compat/run_corpus.py``.

Skipped when ``shared/upstream-examples`` is not next to the checkout (nor
``$KERNELKIT_UPSTREAM_EXAMPLES``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kernelkit.artifact.metadata import Metadata
from tests.helpers import UPSTREAM_EXAMPLES_MISSING, upstream_examples_dir

ROOT = Path(__file__).resolve().parents[2]


EXAMPLES = upstream_examples_dir()

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(EXAMPLES is None, reason=UPSTREAM_EXAMPLES_MISSING)]


def _cuda_torch() -> bool:
    torch = pytest.importorskip("torch")
    return bool(torch.version.cuda) and torch.cuda.is_available()


def example(name: str, dest: Path) -> Path:
    """A committed copy of upstream example ``name``, as a user's clone would be."""
    assert EXAMPLES is not None
    project = dest / name
    shutil.copytree(EXAMPLES / name, project)
    ident = ["-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    subprocess.run(["git", "-C", str(project), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(project), *ident, "commit", "-qm", "import"], check=True)
    return project


def kk(*args: str | Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    for var in ("LOCAL_KERNELS", "KERNELKIT_HUB"):
        env.pop(var, None)
    return subprocess.run([sys.executable, "-m", "kernelkit", *map(str, args)],
                          capture_output=True, text=True, env=env, timeout=900)


def build_check_test(project: Path, backend: str) -> list[dict[str, Any]]:
    """Build ``backend``, check the build (imports included) and run the project's own tests
    through ``kernelkit test``; returns the test outcomes (each variant passed)."""
    built = kk("build", "--json", "--backend", backend, project)
    assert built.returncode == 0, built.stdout + built.stderr
    outcomes = json.loads(built.stdout)
    assert outcomes and all(o["status"] == "built" for o in outcomes), outcomes
    check = kk("check", "--json", project / "build")
    report = json.loads(check.stdout)
    assert check.returncode == 0 and report["ok"], json.dumps(report["findings"], indent=1)
    if not (project / "tests").is_dir():
        return []
    tested = kk("test", "--json", project)
    results: list[dict[str, Any]] = json.loads(tested.stdout)
    logs = {r["variant"]: Path(str(r["log"])).read_text() for r in results if r.get("log")}
    assert tested.returncode == 0, json.dumps(results, indent=1) + "\n".join(logs.values())
    assert results and all(r["status"] == "passed" for r in results), results
    return results


def plan(project: Path) -> dict[str, dict[str, object]]:
    dry = kk("build", "--all", "--dry-run", "--json", project)
    assert dry.returncode == 0, dry.stdout + dry.stderr
    return {v["variant"]: v for v in json.loads(dry.stdout)["variants"]}


def assert_cpu_torch_refuses(project: Path, backends: str) -> None:
    """On a CPU torch, a project without a cpu backend is refused, saying it is the machine."""
    out = kk("build", project)
    assert out.returncode != 0
    first = out.stderr.strip().splitlines()[0]
    assert "not buildable on this machine" in first and backends in first, out.stderr
    assert "(cpu)" in first


# --- CPU projects ---------------------------------------------------------------------------


def test_cpp20_symbols_builds_checks_and_passes_its_tests(tmp_path: Path) -> None:
    project = example("cpp20-symbols", tmp_path)
    results = build_check_test(project, "cpu")
    assert len(results) == 1 and results[0]["variant"].endswith("-cpu-x86_64-linux"), results


def test_extra_data_ships_its_data_and_passes_its_tests(tmp_path: Path) -> None:
    project = example("extra-data", tmp_path)
    results = build_check_test(project, "cpu")
    (variant,) = [str(r["variant"]) for r in results]
    vdir = project / "build" / variant
    shipped = json.loads((vdir / "data.json").read_text())
    assert shipped == json.loads((project / "torch-ext/extra_data/data.json").read_text())
    assert Metadata.read(vdir / "metadata.json").backend == "cpu"


# --- CUDA/ROCm-only projects: planned on a CPU torch, built on a CUDA torch ------------------


def test_relu_compiler_flags(tmp_path: Path) -> None:
    project = example("relu-compiler-flags", tmp_path)
    if _cuda_torch():
        build_check_test(project, "cuda")
        return
    assert_cpu_torch_refuses(project, "(cuda, rocm, xpu)")
    variants = plan(project)
    for name, v in variants.items():
        if "-rocm" in name or "-xpu" in name:
            assert (v["buildable"], v["who"]) == (False, "unsupported"), v


def test_relu_torch_bounds_plans_only_torch_2_12(tmp_path: Path) -> None:
    project = example("relu-torch-bounds", tmp_path)
    variants = plan(project)
    assert variants and all(name.startswith("torch212-") for name in variants), list(variants)
    torch = pytest.importorskip("torch")
    if _cuda_torch() and torch.__version__.startswith("2.12"):
        build_check_test(project, "cuda")
    elif not _cuda_torch():
        assert_cpu_torch_refuses(project, "(cuda, rocm)")


def test_relu_archs_subset_intersects_capabilities_as_upstream(tmp_path: Path) -> None:
    from kernelkit.builder.plan.variant_plan import plan_cuda_archs
    from kernelkit.generate.cuda_archs import default_capabilities
    from kernelkit.manifest import load_manifest

    project = example("relu-archs-subset", tmp_path)
    manifest = load_manifest(project, check_sources=False)
    for toolkit in ("12.6", "12.8", "13.0"):  # upstream expects 7.5/8.0/9.0 (5.0 dropped)
        archs = plan_cuda_archs(manifest, default_capabilities(toolkit), toolkit, "v")
        assert archs == {"relu": ["7.5", "8.0", "9.0"]}, (toolkit, archs)
    if _cuda_torch():
        import torch

        from kernelkit.generate.cuda_archs import parse_capabilities

        chosen = os.environ.get("KERNELKIT_CUDA_CAPABILITIES")
        targets = (parse_capabilities(chosen) if chosen
                   else default_capabilities(str(torch.version.cuda)))
        expected = plan_cuda_archs(manifest, targets, str(torch.version.cuda), "v")["relu"]
        build_check_test(project, "cuda")
        (vdir,) = (project / "build").iterdir()
        assert Metadata.read(vdir / "metadata.json").archs == tuple(expected)
    else:
        assert_cpu_torch_refuses(project, "(cuda, rocm)")


def test_relu_invalid_capability_is_refused_naming_the_capability(tmp_path: Path) -> None:
    """Upstream's build must fail with "empty set of capabilities"; kernelkit says the same when
    it plans the CUDA variant, calls it the project's fault, and list-variants agrees."""
    from kernelkit.builder.plan.variant_plan import plan_cuda_archs
    from kernelkit.errors import NotBuildableError
    from kernelkit.generate.cuda_archs import default_capabilities
    from kernelkit.manifest import load_manifest

    project = example("relu-invalid-capability", tmp_path)
    manifest = load_manifest(project, check_sources=False)
    with pytest.raises(NotBuildableError) as err:
        plan_cuda_archs(manifest, default_capabilities("13.0"), "13.0", "torch-cu130-variant")
    text = str(err.value)
    assert err.value.who == "project"
    assert "CUDA kernel: relu, empty set of capabilities" in text and "99999.0" in text
    assert "[kernel.relu] cuda-capabilities" in text
    cuda = {name: v for name, v in plan(project).items() if "-cu1" in name}
    assert cuda and all((v["buildable"], v["who"]) == (False, "project") for v in cuda.values())
    assert all("empty set of capabilities" in str(v["reason"]) for v in cuda.values())
    listed = json.loads(kk("list-variants", "--json", project).stdout)
    assert {v["variant"]: v["who"] for v in listed if "-cu1" in v["variant"]} == \
        dict.fromkeys(cuda, "project")
