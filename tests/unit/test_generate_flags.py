"""Compile flags and header-only dependencies in the generated CMake (docs/compile-flags.md),
``[general.cuda]`` bounds in the plan, and CUTLASS pins in the toolchain lock."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import zipfile
from pathlib import Path

import pytest

from kernelkit.builder.plan.variant_plan import plan_variant
from kernelkit.builder.toolchain.header_deps import dependency_defines, unpack_header_wheel
from kernelkit.builder.toolchain.toolchain_lock import LockedWheel, ToolchainLock, parse_lock
from kernelkit.errors import IntegrityError, LockError, NotBuildableError
from kernelkit.generate import build_files
from kernelkit.manifest import parse_manifest
from kernelkit.manifest.deps import CUTLASS_RELEASES, DEPENDENCY_IDS, cutlass_env_var
from tests.unit.test_generate_plan import CUDA_ENV, TOOLKIT, manifest

PROJECT = """\
[general]
name = "flags"
version = 1
edition = 5
license = "Apache-2.0"
backends = ["cpu", "cuda"]
{general}
[torch]
src = ["torch-ext/b.cpp"]
cxx-flags = ["-DBINDING_FLAG"]

[kernel.k]
backend = "cuda"
depends = ["torch"{deps}]
src = ["k/k.cu", "k/host.cpp"]
cuda-flags = ["-DCUDA_ONLY", "-static-global-template-stub=false"]
cxx-flags = ["-DHOST_ONLY"]
cuda-minver = "12.4"
cuda-capabilities = ["8.0", "9.0a"]

[kernel.c]
backend = "cpu"
depends = ["torch"]
src = ["c/c.cpp"]
cxx-flags = ["-mavx2"]
"""


def files(deps: str = "", general: str = "") -> dict[str, str]:
    m = parse_manifest(PROJECT.format(deps=deps, general=general))
    return build_files(m, "abc1234")


def test_component_flags_and_bounds_are_rendered() -> None:
    cmake = files(general='[general.cuda]\nminver = "12.6"\nmaxver = "13.1"\n')["CMakeLists.txt"]
    assert 'set(KK_CUDA_MINVER "12.6")' in cmake and 'set(KK_CUDA_MAXVER "13.1")' in cmake
    assert ('kk_cuda_component(k\n  SOURCES "k/k.cu" "k/host.cpp"\n  CXX_FLAGS "-DHOST_ONLY"\n'
            '  CUDA_MINVER "12.4"\n  CUDA_FLAGS "-DCUDA_ONLY" "-static-global-template-stub=false")'
            in cmake)
    assert 'kk_cpu_component(c\n  SOURCES "c/c.cpp"\n  CXX_FLAGS "-mavx2")' in cmake
    assert ('kk_add_sources(torch\n  SOURCES "torch-ext/b.cpp"\n  CXX_FLAGS "-DBINDING_FLAG")'
            in cmake)


def test_helpers_give_upstreams_default_flags() -> None:
    helpers = files()["cmake/kernelkit.cmake"]
    for flag in ("--expt-relaxed-constexpr", "--expt-extended-lambda", "-DENABLE_FP8",
                 "-DONNX_NAMESPACE=onnx_c2", "--diag_suppress=${_d}", "--threads=${NVCC_THREADS}",
                 "KK_TORCH_DEFINITIONS_CUDA", "kernelkit_ops_id.h",
                 "USE_CUDA=1", "CUDA_KERNEL", "CPU_KERNEL", "-fno-gnu-unique"):
        assert flag in helpers, flag
    # cxx-flags reach C++ sources only (not nvcc's host pass); the stub flag needs CUDA 12.8.
    assert '"$<$<COMPILE_LANGUAGE:CXX>:${_f}>"' in helpers
    assert "-Xcompiler=${_f}" not in helpers
    assert 'KK_CUDA_VERSION VERSION_LESS 12.8' in helpers
    assert "CXX_EXTENSIONS OFF" not in helpers  # -std=gnu++NN, as upstream


@pytest.mark.parametrize("dep", sorted(CUTLASS_RELEASES))
def test_every_cutlass_id_gets_headers_without_fetching(dep: str) -> None:
    out = files(deps=f', "{dep}"')
    call = f'kk_dependency_cutlass({dep} "{CUTLASS_RELEASES[dep].version}")'
    assert call in out["CMakeLists.txt"]
    assert "FetchContent" not in "".join(out.values())
    assert "https://" not in out["cmake/kernelkit.cmake"]


def test_cutlass_table_covers_every_accepted_id() -> None:
    accepted = {d for d in DEPENDENCY_IDS if d.startswith("cutlass_")}
    assert accepted == set(CUTLASS_RELEASES)
    assert cutlass_env_var("cutlass_4_4") == "KERNELKIT_CUTLASS_4_4_DIR"


@pytest.mark.parametrize(("bounds", "ok"), [
    ('minver = "13.0"', True), ('minver = "13.1"', False),
    ('maxver = "13.0"', True), ('maxver = "12.9"', False),
])
def test_general_cuda_bounds(bounds: str, ok: bool) -> None:
    text = PROJECT.format(deps="", general=f"[general.cuda]\n{bounds}\n")
    m = parse_manifest(text)
    if ok:
        plan_variant(m, CUDA_ENV, "cuda", "u", toolkit=TOOLKIT)
    else:
        with pytest.raises(NotBuildableError, match=r"\[general.cuda\] minver/maxver"):
            plan_variant(m, CUDA_ENV, "cuda", "u", toolkit=TOOLKIT)


def test_component_cuda_minver_keeps_older_toolkits_out() -> None:
    old = dataclasses.replace(CUDA_ENV, torch_version="2.14.1+cu124", cuda="12.4")
    m = manifest(cuda_extra='cuda-minver = "12.6"')
    plan = plan_variant(m, old, "cuda", "u", toolkit=dataclasses.replace(TOOLKIT, version="12.4"))
    assert plan.component_archs == {}


# --- CUTLASS wheels: lock and unpack -------------------------------------------------------


def _wheel(tmp_path: Path, minor: int = 6) -> LockedWheel:
    path = tmp_path / "nvidia_cutlass-3.6.0.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("cutlass_library/source/include/cutlass/version.h",
                    f"#define CUTLASS_MAJOR 3\n#define CUTLASS_MINOR {minor}\n")
        zf.writestr("cutlass_library/source/tools/util/include/cutlass/util/x.h", "\n")
        zf.writestr("cutlass/__init__.py", "\n")
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    return LockedWheel("nvidia-cutlass", "3.6.0.0", path.name, path.as_uri(), sha)


def test_lock_round_trips_dependency_pins(tmp_path: Path) -> None:
    wheel = _wheel(tmp_path)
    lock = ToolchainLock({}, dependencies={"cutlass_3_6": wheel})
    data = json.loads(lock.dumps())
    assert data["dependencies"]["cutlass_3_6"]["sha256"] == wheel.sha256
    assert parse_lock(data).dependencies == {"cutlass_3_6": wheel}
    assert "dependencies" not in json.loads(ToolchainLock({}).dumps())  # no deps: no key
    data["dependencies"]["cutlass_3_6"]["sha256"] = "nothex"
    with pytest.raises(LockError, match=r"dependencies.cutlass_3_6.sha256"):
        parse_lock(data)


def test_locked_wheel_is_unpacked_once_and_passed_to_cmake(tmp_path: Path) -> None:
    wheel = _wheel(tmp_path)
    lock = ToolchainLock({}, dependencies={"cutlass_3_6": wheel})
    m = parse_manifest(PROJECT.format(deps=', "cutlass_3_6"', general=""))
    defines = dependency_defines(m, "cuda", lock, python=Path("/nonexistent/python"),
                                 environ={}, cache_dir=tmp_path / "cache")
    root = Path(defines["KK_DEP_DIR_cutlass_3_6"])
    assert (root / "include" / "cutlass" / "version.h").is_file()
    assert (root / "tools" / "util" / "include" / "cutlass" / "util" / "x.h").is_file()
    assert not (root.parent.parent / "cutlass").exists()  # only the C++ headers
    assert dependency_defines(m, "cpu", lock, python=Path("/x"), environ={}) == {}
    # An explicit local path wins: kernelkit passes nothing, the CMake reads the variable.
    env = {"KERNELKIT_CUTLASS_3_6_DIR": str(tmp_path)}
    assert dependency_defines(m, "cuda", lock, python=Path("/x"), environ=env,
                              cache_dir=tmp_path / "other") == {}


def test_tampered_wheel_is_refused(tmp_path: Path) -> None:
    wheel = dataclasses.replace(_wheel(tmp_path), sha256="0" * 64)
    with pytest.raises(IntegrityError):
        unpack_header_wheel(wheel, python=Path("/x"), cache_dir=tmp_path / "cache")
