"""CUTLASS for upstream's cutlass-gemm and cutlass-gemm-tvm-ffi: the pinned nvidia-cutlass wheel,
configured offline.

Real pip (resolving the wheel: skipped when no pip source offers it), real unpacking, and a
real CMake configure of the generated project with the CUDA torch test environment, run
without any network (``unshare -n``) to prove nothing is fetched at configure time.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kernelkit.builder.compile.variant import Tools
from kernelkit.builder.toolchain.header_deps import dependency_defines
from kernelkit.builder.toolchain.locking import lock_dependency_wheels
from kernelkit.builder.toolchain.toolchain_lock import ToolchainLock, parse_lock
from kernelkit.builder.toolchain.toolkit import find_cuda_toolkit
from kernelkit.generate import build_files, write_files
from kernelkit.manifest import load_manifest
from tests.integration.test_upstream_flags import _cuda_python, _example


def _offline(cmd: list[str]) -> subprocess.CompletedProcess[str]:
    if shutil.which("unshare") is None or subprocess.run(
            ["unshare", "-n", "true"], capture_output=True).returncode != 0:
        pytest.skip("needs `unshare -n` (a network namespace) to prove offline configure")
    return subprocess.run(["unshare", "-n", *cmd], capture_output=True, text=True)


def _configure(project: Path, src: Path, build: Path, python: Path,
               defines: dict[str, str]) -> (
        subprocess.CompletedProcess[str]):
    tools = Tools.find()
    toolkit = find_cuda_toolkit()
    if toolkit is None:
        pytest.skip("needs a CUDA toolkit (nvcc)")
    args = {"CMAKE_BUILD_TYPE": "Release", "CMAKE_MAKE_PROGRAM": str(tools.ninja),
            "Python3_EXECUTABLE": str(python), "KK_BACKEND": "cuda",
            "KK_SOURCE_ROOT": str(project),
            "KK_CUDA_ARCHS_gemm": "9.0", "CMAKE_EXPORT_COMPILE_COMMANDS": "ON",
            "CMAKE_CUDA_COMPILER": str(toolkit.nvcc), "CUDAToolkit_ROOT": str(toolkit.root),
            **defines}
    return _offline([str(tools.cmake), "-S", str(src), "-B", str(build), "-G", "Ninja",
                     *(f"-D{k}={v}" for k, v in args.items())])


def test_cutlass_gemm_configures_offline_from_the_locked_wheel(tmp_path: Path) -> None:
    python = _cuda_python()
    project = _example("cutlass-gemm", tmp_path)
    manifest = load_manifest(project)
    deps = lock_dependency_wheels(manifest, python=Path(sys.executable))
    if not deps:
        pytest.skip("no pip source offers nvidia-cutlass==3.6.0.0 here")
    assert sorted(deps) == ["cutlass_3_6"] and deps["cutlass_3_6"].name == "nvidia-cutlass"
    lock = parse_lock(json.loads(ToolchainLock({}, dependencies=deps).dumps()))
    assert lock.dependencies == deps  # the lock round-trips its dependency pins

    src = tmp_path / "generated"
    files = build_files(manifest, "abc1234")
    assert "FetchContent" not in "".join(files.values())
    write_files(src, files)
    defines = dependency_defines(manifest, "cuda", lock, python=Path(sys.executable),
                                 environ={}, cache_dir=tmp_path / "cache")
    root = Path(defines["KK_DEP_DIR_cutlass_3_6"])
    assert (root / "include" / "cutlass" / "gemm" / "device" / "gemm.h").is_file()

    done = _configure(project, src, tmp_path / "b", python, defines)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert f"kernelkit: cutlass_3_6: CUTLASS 3.6 from {root}" in done.stdout
    commands = json.loads((tmp_path / "b" / "compile_commands.json").read_text("utf-8"))
    [gemm] = [c["command"] for c in commands if c["file"].endswith("gemm.cu")]
    assert f"-isystem {root}/include" in gemm and f"-isystem {root}/tools/util/include" in gemm


def _tvm_ffi_python() -> Path:
    """A tvm-ffi kernel's CMake needs an interpreter with apache-tvm-ffi, not torch."""
    pytest.importorskip("tvm_ffi")
    return Path(sys.executable)


def test_cutlass_gemm_tvm_ffi_configures_with_cutlass_includes(tmp_path: Path) -> None:
    """Found on the GPU machine: a [tvm-ffi] kernel's ``depends = ["cutlass_3_6"]`` gave no
    include path (gemm.cu: "cutlass/gemm/device/gemm.h: No such file"). A CUTLASS 3.6 root made
    here (version.h only: configure reads nothing else) comes in as `kernelkit build` passes it."""
    project = _example("cutlass-gemm-tvm-ffi", tmp_path)
    root = tmp_path / "cutlass"
    (root / "include" / "cutlass").mkdir(parents=True)
    (root / "include" / "cutlass" / "version.h").write_text(
        "#define CUTLASS_MAJOR 3\n#define CUTLASS_MINOR 6\n#define CUTLASS_PATCH 0\n")
    src = tmp_path / "generated"
    write_files(src, build_files(load_manifest(project), "abc1234"))
    done = _configure(project, src, tmp_path / "b", _tvm_ffi_python(),
                      {"KK_DEP_DIR_cutlass_3_6": str(root)})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert f"kernelkit: cutlass_3_6: CUTLASS 3.6 from {root}" in done.stdout
    commands = json.loads((tmp_path / "b" / "compile_commands.json").read_text("utf-8"))
    [gemm] = [c["command"] for c in commands if c["file"].endswith("gemm.cu")]
    assert f"-isystem {root}/include" in gemm and f"-isystem {root}/tools/util/include" in gemm


def test_cutlass_gemm_tvm_ffi_compiles_against_the_locked_wheel(tmp_path: Path) -> None:
    """The real CUTLASS 3.6 headers from the pinned wheel: gemm.cu compiles (sm_90) into a
    tvm-ffi module that exports its entry point and stays within manylinux_2_28."""
    python = _tvm_ffi_python()
    project = _example("cutlass-gemm-tvm-ffi", tmp_path)
    manifest = load_manifest(project)
    deps = lock_dependency_wheels(manifest, python=Path(sys.executable))
    if not deps:
        pytest.skip("no pip source offers nvidia-cutlass==3.6.0.0 here")
    src = tmp_path / "generated"
    write_files(src, build_files(manifest, "abc1234"))
    defines = dependency_defines(manifest, "cuda", ToolchainLock({}, dependencies=deps),
                                 python=Path(sys.executable), environ={},
                                 cache_dir=tmp_path / "cache")
    done = _configure(project, src, tmp_path / "b", python, defines)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    built = subprocess.run([str(Tools.find().cmake), "--build", str(tmp_path / "b")],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    dump = subprocess.run(["objdump", "-T", str(tmp_path / "b" /
                                                "_cutlass_gemm_tvm_ffi_cuda_abc1234.so")],
                          capture_output=True, text=True, check=True).stdout
    assert "__tvm_ffi_cutlass_gemm" in dump
    glibc = [tuple(int(x) for x in v.split(".")) for v in re.findall(r"GLIBC_([\d.]+)", dump)]
    assert glibc and max(glibc) <= (2, 28)


@pytest.mark.parametrize("example", ["cutlass-gemm", "cutlass-gemm-tvm-ffi"])
def test_cutlass_without_a_source_stops_with_the_variable_to_set(tmp_path: Path,
                                                                 example: str) -> None:
    python = _tvm_ffi_python() if example.endswith("tvm-ffi") else _cuda_python()
    project = _example(example, tmp_path)
    src = tmp_path / "generated"
    write_files(src, build_files(load_manifest(project), "abc1234"))
    done = _configure(project, src, tmp_path / "b", python, {})
    assert done.returncode != 0
    out = done.stdout + done.stderr
    assert "depends cutlass_3_6: no CUTLASS 3.6 headers" in out
    assert "KERNELKIT_CUTLASS_3_6_DIR" in out
