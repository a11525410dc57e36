"""Planning [torch.stable-abi] and [tvm-ffi] variants (pure): names, refusals, CMake, pins."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from kernelkit.builder.plan.plan_matrix import HostFacts, plan_interpreter, plan_matrix
from kernelkit.builder.plan.variant_plan import plan_variant
from kernelkit.builder.toolchain.probe import TorchEnv
from kernelkit.errors import NotBuildableError
from kernelkit.generate import build_files
from kernelkit.generate.tvm_ffi_files import render_tvm_ffi_ops_py
from kernelkit.manifest import parse_manifest
from kernelkit.variants.matrix import targets_for

STABLE = """
[general]
name = "relu"
version = 1
edition = 5
license = "Apache-2.0"
backends = ["cpu", "cuda"]

[torch]
src = ["torch-ext/torch_binding.cpp"]

[torch.stable-abi]
{stable}

[kernel.relu_cpu]
backend = "cpu"
depends = ["torch"]
src = ["relu_cpu/relu_cpu.cpp"]

[kernel.relu]
backend = "cuda"
depends = ["torch"]
src = ["relu_cuda/relu.cu"]
"""

TVM = """
[general]
name = "relu-tvm-ffi"
version = 1
edition = 5
license = "Apache-2.0"
backends = ["cpu", "cuda", "xpu"]

[tvm-ffi]
src = ["tvm-ffi-ext/tvm_ffi_binding.cpp"]

[kernel.relu_cpu]
backend = "cpu"
depends = []
src = ["relu_cpu/relu_cpu.cpp", "util.hh"]
cxx-flags = ["-O3"]

[kernel.relu_cuda]
backend = "cuda"
depends = []
src = ["relu_cuda/relu.cu", "util.hh"]

[kernel.relu_xpu]
backend = "xpu"
depends = []
src = ["relu_xpu/relu.cpp"]
"""

ENV = TorchEnv(
    python=Path("/env/bin/python"), python_version="3.11.7", python_include=Path("/inc"),
    torch_version="2.13.0+cpu", cuda=None, hip=None, cxx11_abi=True,
    cmake_prefix_path=Path("/t/share/cmake"), torch_dir=Path("/t"), site_packages=(),
    nvidia_include_dirs=(), machine="x86_64", os="linux", tvm_ffi="0.1.15.post2")


def stable(table: str = 'cpu = "2.11"'):  # type: ignore[no-untyped-def]
    return parse_manifest(STABLE.format(stable=table))


def test_stable_abi_variant_name_and_plan() -> None:
    plan = plan_variant(stable(), ENV, "cpu", "abc1234")
    assert plan.variant == "torch-stable-abi211-cpu-x86_64-linux"
    assert plan.stable_abi == "2.11" and plan.ops_name == "_relu_cpu_abc1234"


def test_newer_torch_builds_the_same_stable_variant() -> None:
    for torch in ("2.11.0", "2.12.1", "2.13.0+cpu"):
        env = dataclasses.replace(ENV, torch_version=torch)
        assert plan_variant(stable(), env, "cpu", "u").variant == (
            "torch-stable-abi211-cpu-x86_64-linux")


def test_stable_abi_refuses_older_torch() -> None:
    env = dataclasses.replace(ENV, torch_version="2.10.2")
    with pytest.raises(NotBuildableError, match=r'older than \[torch.stable-abi\] cpu = "2.11"'):
        plan_variant(stable(), env, "cpu", "u")


def test_mixed_project_keeps_full_abi_for_other_backends() -> None:
    m = stable('cuda = "2.11"')
    assert plan_variant(m, ENV, "cpu", "u").variant == "torch213-cxx11-cpu-x86_64-linux"
    names = [t.variant for t in targets_for(m)]
    assert "torch213-cxx11-cpu-x86_64-linux" in names
    assert "torch-stable-abi211-cu130-x86_64-linux" in names
    assert not [n for n in names if re.match(r"torch21\d-cxx11-cu", n)]


def test_stable_abi_cmake_selects_the_backend_version() -> None:
    text = build_files(stable('cuda = "2.12"'), "u")["CMakeLists.txt"]
    assert 'set(KK_STABLE_ABI_cuda "2.12")' in text and "KK_STABLE_ABI_cpu" not in text
    assert "TORCH_TARGET_VERSION=${_kk_target}" in text
    assert "(${CMAKE_MATCH_1} << 56) | (${CMAKE_MATCH_2} << 48)" in text
    assert "[torch.stable-abi]" not in build_files(parse_manifest(
        STABLE.format(stable="").replace("[torch.stable-abi]", "")), "u")["CMakeLists.txt"]


def test_interpreter_plan_names_stable_and_tvm_ffi_variants() -> None:
    plan = plan_interpreter(stable(), ENV, facts=HostFacts("x86_64-linux", 2))
    assert [(b.target.variant, b.target.kind) for b in plan.builds] == [
        ("torch-stable-abi211-cpu-x86_64-linux", "stable-abi")]
    plan = plan_interpreter(parse_manifest(TVM), ENV, facts=HostFacts("x86_64-linux", 2))
    assert [(b.target.variant, b.target.kind) for b in plan.builds] == [
        ("tvm-ffi01-cpu-x86_64-linux", "tvm-ffi")]


def test_tvm_ffi_plan() -> None:
    plan = plan_variant(parse_manifest(TVM), ENV, "cpu", "abc1234")
    assert plan.variant == "tvm-ffi01-cpu-x86_64-linux"
    assert plan.ops_name == "_relu_tvm_ffi_cpu_abc1234" and plan.cxx_standard == 17
    no_tvm = dataclasses.replace(ENV, tvm_ffi=None)
    with pytest.raises(NotBuildableError, match="need apache-tvm-ffi"):
        plan_variant(parse_manifest(TVM), no_tvm, "cpu", "u")


def test_tvm_ffi_generated_files() -> None:
    files = build_files(parse_manifest(TVM), "abc1234")
    assert sorted(files) == ["CMakeLists.txt", "cmake/kernelkit.cmake", "cmake/kernelkit_compat.c",
                             "cmake/kernelkit_compat.cpp", "cmake/kernelkit_tvm_ffi_compat.cpp"]
    text = files["CMakeLists.txt"]
    assert 'set(OPS_NAME "_relu_tvm_ffi_${KK_BACKEND}_abc1234")' in text
    assert "find_package(tvm_ffi CONFIG REQUIRED)" in text
    assert "tvm_ffi_configure_target(${OPS_NAME})" in text
    assert "TVM_FFI_EXTENSION_NAME=${OPS_NAME}" in text
    assert 'set(CMAKE_SHARED_LIBRARY_PREFIX "")' in text
    assert 'kk_harden(${OPS_NAME} "__tvm_ffi_*")' in text  # exports only the entry points
    assert "kk_torch" not in text and "find_package(Torch" not in text
    cpu = text.index("# [kernel.relu_cpu]")
    assert text.index('if(KK_BACKEND STREQUAL "cpu")', cpu) > cpu
    assert '"-O3"' in text and "${KK_CUDA_ARCHS_relu_cuda}" in text
    assert "# [kernel.relu_xpu]: backend xpu is not built by kernelkit" in text
    assert "kk_dependency_cutlass(" not in text  # no component declares a dependency


def test_tvm_ffi_links_the_same_compat_shims_and_hardening_as_torch() -> None:
    """Found on the GPU machine (glibc 2.39): a tvm-ffi variant referenced
    ``__isoc23_strtoul@GLIBC_2.38`` because its target had none of the shims torch kernels link."""
    tvm = build_files(parse_manifest(TVM), "abc1234")
    torch = build_files(stable(), "abc1234")
    for helper in ("cmake/kernelkit.cmake", "cmake/kernelkit_compat.c",
                   "cmake/kernelkit_compat.cpp"):
        assert tvm[helper] == torch[helper], helper  # the very same files
    text = tvm["CMakeLists.txt"]
    include = text.index('include("${CMAKE_CURRENT_SOURCE_DIR}/cmake/kernelkit.cmake")')
    target = text.index("add_library(${OPS_NAME} SHARED ${KK_SOURCES}")
    assert include < target
    sources = text[target:text.index(")", target)]
    for shim in ("kernelkit_compat.c", "kernelkit_compat.cpp", "kernelkit_tvm_ffi_compat.cpp"):
        assert f'"${{KK_HELPERS_DIR}}/{shim}"' in sources, shim
    # the hardening torch extensions get, from the one function both call (kernelkit.cmake)
    assert text.index('kk_harden(${OPS_NAME} "__tvm_ffi_*")') > target
    assert 'kk_harden(${OPS_NAME} "PyInit_*")' in torch["cmake/kernelkit.cmake"]
    helpers = tvm["cmake/kernelkit.cmake"]
    harden = helpers[helpers.index("function(kk_harden TARGET EXPORTS)"):]
    harden = harden[:harden.index("endfunction()")]
    assert "kk_link_static_to_chars(${TARGET})" in harden
    assert "$<$<COMPILE_LANGUAGE:C,CXX>:-fno-gnu-unique>" in harden
    assert "-ffile-prefix-map=${_kk_map}" in harden
    assert '"LINKER:--version-script=${_map}"' in harden and "local: *;" in harden
    assert "global: ${EXPORTS};" in harden
    assert "$<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-fno-gnu-unique>" in text


def test_tvm_ffi_declared_dependencies_use_the_torch_cmake_function() -> None:
    """Found on the GPU machine: cutlass-gemm-tvm-ffi got no CUTLASS include path."""
    cuda = 'backend = "cuda"\ndepends = []'
    assert cuda in TVM
    manifest = parse_manifest(TVM.replace(cuda, 'backend = "cuda"\ndepends = ["cutlass_3_6"]')
                              .replace('depends = []\nsrc = ["relu_xpu', 'depends = ["torch"]\n'
                                       'src = ["relu_xpu'))
    files = build_files(manifest, "abc1234")
    text = files["CMakeLists.txt"]
    call = text.index('kk_dependency_cutlass(cutlass_3_6 "3.6")')
    assert text.index("cmake/kernelkit.cmake") < call < text.index("add_library(${OPS_NAME}")
    assert text.index("kk_link_dependencies(${OPS_NAME})") > text.index("add_library(${OPS_NAME}")
    assert "# dependency torch: a tvm-ffi kernel does not link libtorch" in text
    assert "function(kk_dependency_cutlass" not in text  # defined once, in kernelkit.cmake
    helpers = files["cmake/kernelkit.cmake"]
    assert "function(kk_dependency_cutlass ID VERSION)" in helpers
    assert "target_include_directories(kk_deps SYSTEM INTERFACE" in helpers
    assert "kk_link_dependencies(${OPS_NAME})" in helpers  # the torch extension links it too


def test_tvm_ffi_ops_py() -> None:
    text = render_tvm_ffi_ops_py("relu_tvm_ffi", "abc1234", "cpu")
    assert 'tvm_ffi.load_module(str(Path(__file__).parent / (_NAMESPACE + _SUFFIX)))' in text
    namespace: dict[str, object] = {"__file__": "/v/_ops.py"}
    # the real load is covered by tests/integration/test_stable_abi_tvm_ffi.py
    exec(text.replace("import tvm_ffi\n", "").replace("tvm_ffi.load_module", "str"), namespace)
    assert namespace["ops"] == "/v/_relu_tvm_ffi_cpu_abc1234.so"
    prefix = namespace["torch_add_op_namespace_prefix"]
    jax = namespace["jax_add_ffi_target_name_prefix"]
    assert callable(prefix) and prefix("relu") == "_relu_tvm_ffi_cpu_abc1234::relu"
    assert callable(jax) and jax("relu") == "_relu_tvm_ffi_cpu_abc1234.relu"


def test_matrix_pins_tvm_ffi_and_plans_it_buildable() -> None:
    m = parse_manifest(TVM)
    targets = {t.variant: t for t in targets_for(m)}
    cpu = targets["tvm-ffi01-cpu-x86_64-linux"]
    assert cpu.kind == "tvm-ffi" and cpu.pin is not None
    assert cpu.pin.requirements == [cpu.pin.requirement, "apache-tvm-ffi==0.1.15.post2"]
    assert cpu.to_json()["extra-pins"] == ["apache-tvm-ffi==0.1.15.post2"]
    plan = plan_matrix(m, HostFacts(system="x86_64-linux", cores=2))
    by = {b.target.variant: b for b in plan.builds}
    assert by["tvm-ffi01-cpu-x86_64-linux"].buildable, by["tvm-ffi01-cpu-x86_64-linux"].reason


def test_matrix_plans_stable_abi_cpu_buildable_from_newest_torch() -> None:
    plan = plan_matrix(stable(), HostFacts(system="x86_64-linux", cores=2))
    by = {b.target.variant: b for b in plan.builds}
    b = by["torch-stable-abi211-cpu-x86_64-linux"]
    assert b.buildable and b.target.kind == "stable-abi"
    assert b.target.torch == "2.13"  # the newest torch of the matrix builds it


def test_tvm_ffi_build_cache_covers_the_tvm_ffi_ext_package(tmp_path: Path) -> None:
    from kernelkit.builder.caches.build_cache import source_digest
    from kernelkit.manifest import load_manifest

    (tmp_path / "build.toml").write_text(TVM)
    for rel in ("tvm-ffi-ext/tvm_ffi_binding.cpp", "relu_cpu/relu_cpu.cpp", "util.hh",
                "relu_cuda/relu.cu", "relu_xpu/relu.cpp"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("// source\n")
    pkg = tmp_path / "tvm-ffi-ext" / "relu_tvm_ffi"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("x = 1\n")
    manifest = load_manifest(tmp_path)
    before = source_digest(manifest, "cpu")
    (pkg / "__init__.py").write_text("x = 2\n")
    assert source_digest(manifest, "cpu") != before
