"""The builder's planning values: progress parsing, ninja log times, resource fitting,
deterministic shards and the one-interpreter plan (pure: no compile here)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kernelkit.builder.compile.progress import NinjaProgress, describe, unit_times
from kernelkit.builder.plan.plan_matrix import (
    HostFacts,
    plan_interpreter,
    plan_matrix,
    shard_targets,
)
from kernelkit.builder.plan.resources import GIB, Machine, fit
from kernelkit.builder.toolchain.probe import TorchEnv
from kernelkit.errors import KernelkitError
from kernelkit.manifest import load_manifest
from kernelkit.variants.matrix import targets_for

ADDONE = Path(__file__).resolve().parents[1] / "data" / "projects" / "addone"


def test_progress_from_ninja_status_lines() -> None:
    progress = NinjaProgress(started=0.0)
    assert progress.feed("-- Configuring done") is None
    step = progress.feed("[2/5] /usr/bin/c++ -O3 -c /p/kernel_cpu/add.cpp -o add.o")
    assert step is not None and (step.done, step.total, step.what) == (2, 5, "add.cpp")
    assert step.remaining is not None and step.remaining == pytest.approx(step.elapsed * 1.5)
    link = progress.feed("[5/5] /usr/bin/c++ -shared -o _ops.abi3.so a.o b.o")
    assert link is not None and link.what == "linking" and link.remaining == 0


def test_describe_finds_the_source_of_an_nvcc_command() -> None:
    cmd = "/usr/local/cuda/bin/nvcc -forward-unknown-to-host-compiler -x cu -c /k/img.cu -o x.o"
    assert describe(cmd) == "img.cu"


def test_unit_times_reads_only_the_new_entries(tmp_path: Path) -> None:
    log = tmp_path / ".ninja_log"
    log.write_text("# ninja log v7\n"
                   "0\t900\t0\tCMakeFiles/_ops.dir/old.cpp.o\t1\n"
                   "10\t5010\t0\tCMakeFiles/_ops.dir/p/kernel_cuda/img.cu.o\t2\n"
                   "20\t1520\t0\tCMakeFiles/_ops.dir/p/torch-ext/binding.cpp.o\t3\n"
                   "5100\t5200\t0\t_ops.abi3.so\t4\n")
    times = unit_times(tmp_path, since_line=2, project=Path("/p"))
    assert times == {"kernel_cuda/img.cu": 5.0, "torch-ext/binding.cpp": 1.5}
    assert list(times) == ["kernel_cuda/img.cu", "torch-ext/binding.cpp"]  # slowest first


def test_fit_spreads_cores_over_variants_jobs_and_nvcc_threads() -> None:
    big = Machine(16, 128 * GIB)
    one = fit(big, variants=1, cuda_units=1, cuda_archs=10)
    assert (one.parallel, one.jobs, one.nvcc_threads) == (1, 16, 10)  # every core busy
    two = fit(big, variants=2, cuda_units=3, cuda_archs=10)
    assert two.parallel * two.jobs <= 16 and two.nvcc_threads >= 2
    cpu = fit(Machine(8, 64 * GIB), variants=2)
    assert (cpu.parallel, cpu.jobs, cpu.nvcc_threads) == (2, 4, 1)


def test_fit_never_runs_more_cuda_units_than_memory_allows() -> None:
    small = fit(Machine(32, 6 * GIB), variants=4, cuda_units=8, cuda_archs=10)
    assert small.parallel * small.jobs <= 3  # 2 GiB per nvcc unit
    assert small.nvcc_threads == 1
    assert fit(Machine(32, 6 * GIB), variants=4, jobs=7, nvcc_threads=3).jobs == 7


def test_shards_cover_every_variant_exactly_once() -> None:
    targets = targets_for(load_manifest(ADDONE))
    shards = [shard_targets(targets, k, 3) for k in (1, 2, 3)]
    names = [t.variant for s in shards for t in s]
    assert sorted(names) == sorted(t.variant for t in targets) and len(set(names)) == len(names)
    assert [t.variant for t in shard_targets(targets, 2, 3)] == [t.variant for t in shards[1]]
    with pytest.raises(KernelkitError, match="between 1 and 3"):
        shard_targets(targets, 4, 3)


def test_sharded_plan_fits_parallelism_to_its_own_variants() -> None:
    facts = HostFacts("x86_64-linux", 8, sources={"torch213-cxx11-cpu-x86_64-linux": "x"})
    manifest = load_manifest(ADDONE)
    full = plan_matrix(manifest, facts)
    part = plan_matrix(manifest, facts, shard=(1, 2))
    assert len(part.builds) < len(full.builds)
    assert part.parallel == max(1, len(part.buildable)) and part.jobs == 8 // part.parallel


def _torch_env(cuda: str | None) -> TorchEnv:
    return TorchEnv(python=Path("/envs/t/bin/python"), python_version="3.11",
                    python_include=Path("/i"), torch_version="2.14.1+cu130" if cuda else "2.13.0",
                    cuda=cuda, hip=None, cxx11_abi=True, cmake_prefix_path=Path("/c"),
                    torch_dir=Path("/t"), site_packages=(), nvidia_include_dirs=(),
                    machine="x86_64", os="linux")


def test_plain_build_is_a_one_environment_plan() -> None:
    manifest = load_manifest(ADDONE)
    plan = plan_interpreter(manifest, _torch_env("13.0"), facts=HostFacts("x86_64-linux", 4))
    assert sorted(b.target.variant for b in plan.builds) == [
        "torch214-cxx11-cpu-x86_64-linux", "torch214-cxx11-cu130-x86_64-linux"]
    assert all(b.python == Path("/envs/t/bin/python") for b in plan.builds)
    assert plan.parallel == 1 and plan.jobs == 4
    cpu = plan_interpreter(manifest, _torch_env(None), facts=HostFacts("x86_64-linux", 4),
                           backends=["cpu"], jobs=3)
    assert [b.target.backend for b in cpu.builds] == ["cpu"] and cpu.jobs == 3


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kernelkit", *args], capture_output=True,
                          text=True, timeout=300)


def test_plain_dry_run_builds_nothing(tmp_path: Path) -> None:
    import shutil

    project = tmp_path / "addone"
    shutil.copytree(ADDONE, project)
    proc = _cli("build", str(project), "--dry-run", "--json")
    assert proc.returncode == 0, proc.stderr
    assert '"torch213-cxx11-cpu-x86_64-linux"' in proc.stdout
    assert not (project / "build").exists() and not (project / "_cmake_build").exists()


@pytest.mark.parametrize("flag", [["-j", "-5"], ["-j", "0"], ["--parallel", "0"],
                                  ["--all", "--shard", "3/2"], ["--shard", "1/2"]])
def test_bad_numbers_are_refused(tmp_path: Path, flag: list[str]) -> None:
    proc = _cli("build", str(ADDONE), "--dry-run", *flag)
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    assert ("must be at least 1" in proc.stderr or "K/N" in proc.stderr
            or "use it with --all" in proc.stderr)
