"""Matrix build planning (pure), CUDA toolkit choice, the build cache key, and failure isolation."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kernelkit.builder.caches.build_cache import cache_key, read_cache, record_cache, source_digest
from kernelkit.builder.compile.events import BuildEvent, OnEvent, Outcome
from kernelkit.builder.execute import execute_plan
from kernelkit.builder.plan.plan_matrix import HostFacts, PlannedBuild, plan_matrix, select_targets
from kernelkit.builder.toolchain.envs import assemble_cuda_home
from kernelkit.builder.toolchain.toolkit import CudaToolkit, choose_cuda_toolkit
from kernelkit.errors import BuildError, NotBuildableError
from kernelkit.manifest import Manifest, load_manifest
from kernelkit.variants.matrix import load_matrix, targets_for

ADDONE = Path(__file__).resolve().parents[1] / "data" / "projects" / "addone"
CPU213 = "torch213-cxx11-cpu-x86_64-linux"
CU214 = "torch214-cxx11-cu130-x86_64-linux"
NVCC13 = CudaToolkit.of_nvcc(Path("/usr/local/cuda/bin/nvcc"), "13.0")


@pytest.fixture
def addone() -> Manifest:
    return load_manifest(ADDONE)


def facts(**kw: object) -> HostFacts:
    base: dict[str, object] = {"system": "x86_64-linux", "cores": 8, "toolkit": NVCC13,
                               "sources": {CPU213: "/opt/wheels", CU214: "pypi"}}
    base.update(kw)
    missing = {t.variant: "not available" for t in targets_for(load_manifest(ADDONE))
               if t.variant not in base["sources"]}  # type: ignore[operator]
    return HostFacts(missing=missing, **base)  # type: ignore[arg-type]


def test_plan_marks_buildable_and_explains(addone: Manifest) -> None:
    plan = plan_matrix(addone, facts())
    by = {b.target.variant: b for b in plan.builds}
    assert [b.target.variant for b in plan.buildable] == [CPU213, CU214]
    assert by["torch212-cxx11-cu126-x86_64-linux"].reason == "not available"
    assert "system nvcc 13.0" in by[CU214].reason
    assert plan.parallel == 2 and plan.jobs == 4  # 8 cores, 2 variants at once
    assert by[CPU213].command == ("kernelkit", "build", str(ADDONE), "--variant", CPU213)


def test_plan_json_one_entry_per_variant(addone: Manifest) -> None:
    data = json.loads(json.dumps(plan_matrix(addone, facts(), parallel=1).to_json()))
    assert data["parallel"] == 1 and data["jobs"] == 8
    assert len(data["variants"]) == len(targets_for(addone))
    entry = next(v for v in data["variants"] if v["variant"] == CPU213)
    assert entry["buildable"] is True and entry["required"] is True
    assert entry["torch-pin"] == "2.13.0+cpu" and entry["command"][-1] == CPU213
    assert CPU213 in plan_matrix(addone, facts()).render()


def test_plan_other_system_and_patterns(addone: Manifest) -> None:
    plan = plan_matrix(addone, facts(), system="aarch64-linux")
    assert plan.builds and not plan.buildable
    assert all("aarch64-linux machines only" in b.reason for b in plan.builds)
    sel = plan_matrix(addone, facts(), patterns=["torch213-*", "*-cu130-*"])
    assert [b.target.variant for b in sel.builds] == [
        "torch211-cxx11-cu130-x86_64-linux", "torch212-cxx11-cu130-x86_64-linux",
        CPU213, "torch213-cxx11-cu126-x86_64-linux", "torch213-cxx11-cu130-x86_64-linux",
        "torch213-cxx11-cu132-x86_64-linux", CU214]
    assert select_targets(targets_for(addone), ["nothing*"]) == []


def test_cuda_without_toolkit_wheels_or_nvcc(addone: Manifest) -> None:
    plan = plan_matrix(addone, facts(toolkit=None))
    by = {b.target.variant: b for b in plan.builds}
    # Without a system nvcc the toolkit comes from pip wheels (their availability is a fact).
    assert by[CU214].buildable and "pip's CUDA 13.0 toolkit wheels" in by[CU214].reason


def test_choose_cuda_toolkit() -> None:
    wheels = load_matrix().toolkit_wheels_for("12.6")
    same = choose_cuda_toolkit("13.0", NVCC13, load_matrix().toolkit_wheels_for("13.0"))
    assert same.source == "system" and same.system == NVCC13
    other = choose_cuda_toolkit("12.6", NVCC13, wheels)
    assert other.source == "pip" and other.requirements == (
        "nvidia-cuda-nvcc-cu12==12.6.*", "nvidia-cuda-runtime-cu12==12.6.*",
        "nvidia-cuda-cccl-cu12==12.6.*")
    assert "system nvcc is 13.0" in other.reason
    none = choose_cuda_toolkit("13.2", None, load_matrix().toolkit_wheels_for("13.2"))
    assert none.source == "pip" and none.requirements[0] == "nvidia-cuda-nvcc==13.2.*"
    with pytest.raises(NotBuildableError, match=r"CUDA 11.8"):
        choose_cuda_toolkit("11.8", NVCC13, None)


def test_assemble_cuda_home(tmp_path: Path) -> None:
    site = tmp_path / "site"
    for rel in ("nvidia/cuda_nvcc/bin/nvcc", "nvidia/cuda_nvcc/include/crt/host.h",
                "nvidia/cuda_runtime/include/cuda_runtime.h",
                "nvidia/cuda_runtime/lib/libcudart.so.12", "nvidia/cuda_cccl/include/cub/cub.h"):
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_text(rel)
    home = assemble_cuda_home(site, ("nvidia/cuda_nvcc", "nvidia/cuda_runtime",
                                     "nvidia/cuda_cccl"), tmp_path / "cuda")
    assert (home / "bin" / "nvcc").read_text() == "nvidia/cuda_nvcc/bin/nvcc"
    assert (home / "include" / "cuda_runtime.h").is_file()
    assert (home / "include" / "crt" / "host.h").is_file()
    assert (home / "include" / "cub" / "cub.h").is_file()
    cudart = (home / "lib64" / "libcudart.so").read_text()
    assert cudart == "nvidia/cuda_runtime/lib/libcudart.so.12"
    # Environments are assembled in a temporary sibling and renamed: links must survive that.
    import shutil

    shutil.move(str(tmp_path / "site"), str(tmp_path / "env" / "site"))
    shutil.move(str(tmp_path / "cuda"), str(tmp_path / "env" / "cuda"))
    assert (tmp_path / "env" / "cuda" / "bin" / "nvcc").read_text() == "nvidia/cuda_nvcc/bin/nvcc"


def test_cache_key_follows_sources(tmp_path: Path) -> None:
    project = tmp_path / "addone"
    shutil.copytree(ADDONE, project)
    m = load_manifest(project)
    before = source_digest(m)
    assert source_digest(load_manifest(project)) == before
    cuda_before = source_digest(m, "cuda")
    (project / "addone_cpu" / "addone_cpu.cpp").write_text("// changed\n", encoding="utf-8")
    assert source_digest(m) != before
    assert source_digest(m, "cuda") == cuda_before  # another backend's kernel
    (project / "README.md").write_text("not a build input")
    after = source_digest(m)
    assert source_digest(m) == after
    py = next((project / "torch-ext").rglob("*.py"))
    py.write_text(py.read_text() + "\n# changed\n")
    assert source_digest(m) != after


def test_cache_key_parts_and_record(tmp_path: Path) -> None:
    k = cache_key(sources="s", toolchain="t", capabilities=["9.0"], variant="v")
    assert k != cache_key(sources="s", toolchain="t2", capabilities=["9.0"], variant="v")
    assert k != cache_key(sources="s", toolchain="t", capabilities=None, variant="v")
    record_cache(tmp_path, "v", k)
    record_cache(tmp_path, "w", "x")
    assert read_cache(tmp_path) == {"v": k, "w": "x"}


def test_one_failure_does_not_stop_the_others(addone: Manifest, tmp_path: Path) -> None:
    plan = plan_matrix(addone, facts(), out_root=tmp_path)
    seen: list[str] = []

    def build_one(b: PlannedBuild, emit: OnEvent) -> Outcome:
        if b.target.backend == "cuda":
            raise BuildError(b.target.variant, "nvcc exploded", log_path=tmp_path / "x.log")
        return Outcome(b.target.variant, "built")

    def on_event(e: BuildEvent) -> None:
        if e.kind == "done":
            seen.append(e.variant)

    out = execute_plan(plan, build_one, on_event)
    status = {o.variant: o for o in out}
    assert status[CPU213].status == "built"
    assert status[CU214].status == "failed" and status[CU214].log_path == tmp_path / "x.log"
    assert "nvcc exploded" in status[CU214].message
    assert sorted(seen) == [CPU213, CU214]
    assert sum(o.status == "skipped" for o in out) == len(plan.builds) - 2


def test_env_name_is_variant_plus_pin_hash() -> None:
    import sys

    from kernelkit.builder.toolchain.envs import EnvSpec
    from kernelkit.variants.matrix import Pin

    venv_bin = Path(sys.executable).parent
    names = {EnvSpec(CPU213, Pin("2.13.0+cpu", None), venv_bin / n).dirname
             for n in ("python", "python3") if (venv_bin / n).exists()}
    assert len(names) == 1 and next(iter(names)).startswith(CPU213 + "-")
    other = EnvSpec(CPU213, Pin("2.13.1+cpu", None), Path(sys.executable)).dirname
    assert other not in names
