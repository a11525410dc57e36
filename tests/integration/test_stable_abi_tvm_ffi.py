"""Upstream's relu-torch-stable-abi and relu-tvm-ffi examples (CPU parts), for real: CMake and
ninja compile them (once per module), ``kernelkit check`` passes, kernelkit's loader imports
them, and the projects' own test suites pass through upstream ``kernels`` with
``LOCAL_KERNELS`` pointing at the build. Skipped when ``../shared/upstream-examples`` is absent.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kernelkit.artifact.metadata import Metadata
from kernelkit.builder.api import build
from kernelkit.check import check_build
from kernelkit.check.elf import read_elf
from kernelkit.loader.api import get_local_kernel
from tests.helpers import UPSTREAM_EXAMPLES_MISSING, upstream_examples_dir

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = upstream_examples_dir()
STABLE = "torch-stable-abi211-cpu-x86_64-linux"
TVM = "tvm-ffi01-cpu-x86_64-linux"

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(EXAMPLES is None, reason=UPSTREAM_EXAMPLES_MISSING)]


def _copy_project(name: str, dest: Path) -> Path:
    assert EXAMPLES is not None
    project = dest / name
    shutil.copytree(EXAMPLES / name, project)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t.invalid"]
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    subprocess.run(["git", "add", "-A"], cwd=project, check=True)
    subprocess.run([*git, "commit", "-qm", "example"], cwd=project, check=True)
    return project


@pytest.fixture(scope="module")
def stable_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("torch")
    project = _copy_project("relu-torch-stable-abi", tmp_path_factory.mktemp("stable"))
    results = build(project, backends=["cpu"])
    assert [r.variant for r in results] == [STABLE]
    return project


@pytest.fixture(scope="module")
def tvm_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("tvm_ffi")
    project = _copy_project("relu-tvm-ffi", tmp_path_factory.mktemp("tvm"))
    results = build(project, backends=["cpu"])
    assert [r.variant for r in results] == [TVM]
    return project


def _run_own_tests(project: Path, repo_id: str) -> subprocess.CompletedProcess[str]:
    """The project's tests/ as upstream runs them: ``kernels.get_kernel(repo_id)`` resolved
    through ``LOCAL_KERNELS`` to the build, in a fresh interpreter."""
    env = {**os.environ, "LOCAL_KERNELS": f"{repo_id}={project}"}
    env.pop("PYTHONPATH", None)  # upstream kernels alone, not kernelkit
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "tests"], cwd=project, env=env, capture_output=True, text=True,
                          timeout=600)


# --- torch stable ABI ---------------------------------------------------------------------


def test_stable_abi_variant_layout_and_metadata(stable_project: Path) -> None:
    vdir = stable_project / "build" / STABLE
    meta = Metadata.read(vdir / "metadata.json")
    assert meta.backend == "cpu" and meta.id.startswith("_relu_torch_stable_abi_cpu_")
    assert (vdir / f"{meta.id}.abi3.so").is_file()
    assert {"__init__.py", "_ops.py", "layers"} <= {p.name for p in vdir.iterdir()}
    assert meta.provenance is not None
    assert meta.provenance.extra["torch-stable-abi"] == "2.11"


def test_stable_abi_binary_uses_only_the_stable_c_abi(stable_project: Path) -> None:
    vdir = stable_project / "build" / STABLE
    facts = read_elf(next(vdir.glob("*.abi3.so")))
    names = [s.name for s in facts.undefined]
    assert any(n.startswith("aoti_torch_") for n in names)
    assert "torch_library_impl" in names
    cxx_torch = [n for n in names if n.startswith(("_ZN3c10", "_ZNK3c10", "_ZN2at", "_ZN5torch"))]
    assert cxx_torch == []
    report = check_build(stable_project)
    assert report.variants == (STABLE,)
    assert report.errors == [], report.errors


def test_stable_abi_check_rejects_libtorch_cxx_symbols(stable_project: Path,
                                                       tmp_path: Path) -> None:
    """A binary calling c10:: C++ code is not stable-ABI: check names the symbol (real ELF)."""
    if shutil.which("g++") is None:
        pytest.skip("needs g++")
    vdir = tmp_path / STABLE
    shutil.copytree(stable_project / "build" / STABLE, vdir)
    lib = next(vdir.glob("*.abi3.so"))
    src = tmp_path / "bad.cpp"
    src.write_text('namespace c10 { void warn_unstable(); }\n'
                   'extern "C" void f() { c10::warn_unstable(); }\n')
    subprocess.run(["g++", "-shared", "-fPIC", str(src), "-o", str(lib)], check=True)
    report = check_build(vdir, import_check=False)
    hits = [f for f in report.errors if f.code == "torch-stable-abi"]
    assert len(hits) == 1 and "_ZN3c1013warn_unstableEv" in hits[0].message
    assert "torch/csrc/stable" in hits[0].fix


def test_stable_abi_loads_with_kernelkit(stable_project: Path) -> None:
    torch = pytest.importorskip("torch")
    kernel = get_local_kernel(stable_project)
    x = torch.randn(257)
    torch.testing.assert_close(kernel.relu(x), torch.relu(x))


def test_stable_abi_own_tests_pass_with_upstream_kernels(stable_project: Path) -> None:
    pytest.importorskip("kernels")
    proc = _run_own_tests(stable_project, "kernels-test/relu-torch-stable-abi")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout


# --- tvm-ffi ------------------------------------------------------------------------------


def test_tvm_ffi_variant_layout_and_linkage(tvm_project: Path) -> None:
    vdir = tvm_project / "build" / TVM
    meta = Metadata.read(vdir / "metadata.json")
    lib = vdir / f"{meta.id}.so"  # no abi3 tag, no lib prefix
    assert lib.is_file() and meta.backend == "cpu"
    assert "tvm_ffi.load_module" in (vdir / "_ops.py").read_text()
    facts = read_elf(lib)
    assert "libtvm_ffi.so" in facts.needed
    assert not [n for n in facts.needed if n.startswith(("libtorch", "libc10"))]
    assert facts.rpath == () and facts.runpath == ()
    assert meta.provenance is not None and str(meta.provenance.extra["tvm-ffi"]).startswith("0.1")


def test_tvm_ffi_passes_check_with_import(tvm_project: Path) -> None:
    report = check_build(tvm_project)
    assert report.variants == (TVM,)
    assert report.findings == (), report.findings  # imported: no import-skipped warning


def test_tvm_ffi_links_the_compat_shims(tmp_path: Path) -> None:
    """Found on the GPU machine (glibc 2.39): relu-tvm-ffi referenced
    ``__isoc23_strtoul@GLIBC_2.38`` and failed check (manylinux_2_28), as its target lacked the
    shims torch kernels link. Here the kernel itself references the newer names (the C23 ones
    declared by hand, as glibc >= 2.38 headers redirect to them; arc4random and fstat64 are
    this glibc's own 2.36/2.33 versions): the build binds them locally and passes check."""
    pytest.importorskip("tvm_ffi")
    from tests.integration.test_compat_shims import NEWER_GLIBC_USER

    project = _copy_project("relu-tvm-ffi", tmp_path)
    kernel = project / "relu_cpu" / "relu_cpu.cpp"
    kernel.write_text(kernel.read_text() + NEWER_GLIBC_USER)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t.invalid", "commit", "-qam",
                    "newer glibc names"], cwd=project, check=True)
    [result] = build(project, backends=["cpu"])
    lib = result.path / f"{result.metadata.id}.so"
    dump = subprocess.run(["objdump", "-T", str(lib)], capture_output=True, text=True,
                          check=True).stdout
    assert "__isoc23" not in dump and "arc4random" not in dump and "fstat64" not in dump
    glibc = [tuple(int(x) for x in v.split(".")) for v in re.findall(r"GLIBC_([\d.]+)", dump)]
    assert glibc and max(glibc) <= (2, 28)
    report = check_build(project)
    assert report.variants == (TVM,)
    assert report.findings == (), report.findings  # imported, manylinux_2_28 clean


def test_tvm_ffi_loads_with_kernelkit(tvm_project: Path) -> None:
    torch = pytest.importorskip("torch")
    kernel = get_local_kernel(tvm_project)
    x = torch.randn(300)
    out = torch.empty_like(x)
    torch.testing.assert_close(kernel.relu(x, out), torch.relu(x))
    # The module name is kernelkit's own (never the hub-provided id), named after the package.
    meta = Metadata.read(tvm_project / "build" / TVM / "metadata.json")
    assert kernel.__name__.startswith(f"_kernelkit_{meta.python_name}_")
    assert meta.id == "_relu_tvm_ffi_cpu_" + meta.id.rsplit("_", 1)[-1]


def test_tvm_ffi_own_tests_pass_with_upstream_kernels(tvm_project: Path) -> None:
    pytest.importorskip("kernels")
    proc = _run_own_tests(tvm_project, "kernels-test/relu-tvm-ffi")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout


# --- torch stable ABI, CUDA (needs nvcc and kernelkit's CUDA test environment) -------------


def test_stable_abi_cuda_variant_uses_only_the_stable_c_abi(
        tmp_path: Path, cuda_torch_python: Path) -> None:
    """Compiled with nvcc against torch 2.14 (CUDA 13.0), named for the stable-ABI version
    2.11; imports in the CUDA torch (no GPU needed to import)."""
    project = _copy_project("relu-torch-stable-abi", tmp_path)
    [result] = build(project, python=cuda_torch_python, backends=["cuda"],
                     cuda_capabilities=["9.0"])
    assert result.variant == "torch-stable-abi211-cu130-x86_64-linux"
    assert result.metadata.archs == ("9.0",)
    lib = next(result.path.glob("*.abi3.so"))
    names = [s.name for s in read_elf(lib).undefined]
    assert "torch_library_impl" in names
    assert not [n for n in names if n.startswith(("_ZN3c10", "_ZN2at", "_ZN5torch"))]
    report = check_build(project, variant_pythons={result.variant: cuda_torch_python})
    # no error at all: torch 2.14's stable headers call dlsym (GLIBC_2.34 on this glibc),
    # which the compat shim binds to the manylinux_2_28 baseline version
    assert report.errors == [], report.errors
    assert {f.code for f in report.findings} <= {"no-fake"}, report.findings


# --- tvm-ffi, CUDA (needs nvcc and kernelkit's CUDA test environment) ----------------------


@pytest.fixture(scope="module")
def cuda_tvm_ffi_python(tmp_path_factory: pytest.TempPathFactory,
                        cuda_torch_python: Path) -> Path:
    """A venv that sees the CUDA torch environment (a .pth file) and has the pinned
    apache-tvm-ffi installed by pip (skipped when pip cannot get it)."""
    from kernelkit.variants.matrix import load_matrix

    venv = tmp_path_factory.mktemp("tvm-cuda") / "venv"
    base = subprocess.run([str(cuda_torch_python), "-c", "import sys; print(sys._base_executable)"],
                          capture_output=True, text=True, check=True).stdout.strip()
    subprocess.run([base, "-m", "venv", str(venv)], check=True)
    site = subprocess.run([str(cuda_torch_python), "-c", ("import torch, pathlib; "
                           "print(pathlib.Path(torch.__file__).parents[1])")],
                          capture_output=True, text=True, check=True).stdout.strip()
    [own_site] = (venv / "lib").glob("python*/site-packages")
    (own_site / "kernelkit-cuda-torch.pth").write_text(site + "\n")
    pip = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q",
                          load_matrix().tvm_ffi_pins["0.1"]], capture_output=True, text=True)
    if pip.returncode != 0:
        pytest.skip(f"pip cannot install apache-tvm-ffi here: {pip.stderr[-300:]}")
    return venv / "bin" / "python"


def test_tvm_ffi_cuda_variant_builds_and_checks(tmp_path: Path,
                                               cuda_tvm_ffi_python: Path) -> None:
    project = _copy_project("relu-tvm-ffi", tmp_path)
    [result] = build(project, python=cuda_tvm_ffi_python, backends=["cuda"],
                     cuda_capabilities=["9.0"])
    assert result.variant == "tvm-ffi01-cu130-x86_64-linux"
    assert result.metadata.archs == ("9.0",) and result.metadata.backend == "cuda"
    facts = read_elf(result.path / f"{result.metadata.id}.so")
    assert "libtvm_ffi.so" in facts.needed
    assert not [n for n in facts.needed if n.startswith(("libtorch", "libc10"))]
    report = check_build(project, variant_pythons={result.variant: cuda_tvm_ffi_python})
    assert report.findings == (), report.findings  # imported, ops namespace verified
