"""Real builds of the ``addone`` test project: CPU with this venv's torch, CUDA (capability 9.0
only) with a CUDA torch environment. Compiles are shared through module-scoped fixtures."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from elftools.elf.elffile import ELFFile

from kernelkit.artifact.digest import Digest
from kernelkit.artifact.metadata import Metadata
from kernelkit.builder.api import build
from kernelkit.builder.compile.provenance import build_id
from kernelkit.builder.toolchain.probe import probe_python
from kernelkit.errors import BuildError, NotBuildableError
from kernelkit.manifest import load_manifest
from tests.helpers import git

ROOT = Path(__file__).resolve().parents[2]
PROJECT = Path(__file__).resolve().parents[1] / "data" / "projects" / "addone"
PYTHON = Path(sys.executable)
CPU_VARIANT = "torch213-cxx11-cpu-x86_64-linux"

# manylinux_2_28 symbol-version ceilings and the libraries an extension may need.
CEILINGS = {"GLIBC": (2, 28), "GLIBCXX": (3, 4, 24), "CXXABI": (1, 3, 11), "GCC": (7, 0, 0)}
ALLOWED_NEEDED = re.compile(
    r"^(libtorch(_cpu|_cuda)?\.so|libc10(_cuda)?\.so|libcudart\.so\.\d+|libstdc\+\+\.so\.6|"
    r"libgcc_s\.so\.1|libc\.so\.6|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1|"
    r"ld-linux-(x86-64|aarch64)\.so\.[12])$")



def copy_project(dest: Path, *, with_git: bool = True) -> Path:
    shutil.copytree(PROJECT, dest, ignore=shutil.ignore_patterns("build", "__pycache__"))
    if with_git:
        git(dest, "init", "-q")
        git(dest, "add", ".")
        git(dest, "commit", "-q", "-m", "addone")
    return dest


def elf_facts(path: Path) -> dict[str, object]:
    with path.open("rb") as fh:
        elf = ELFFile(fh)
        dynamic: Any = elf.get_section_by_name(".dynamic")
        verneed: Any = elf.get_section_by_name(".gnu.version_r")
        dynsym: Any = elf.get_section_by_name(".dynsym")
        tags = list(dynamic.iter_tags())
        versions = {aux.name for _, auxes in verneed.iter_versions() for aux in auxes}
        syms = list(dynsym.iter_symbols())
    return {
        "needed": [t.needed for t in tags if t.entry.d_tag == "DT_NEEDED"],
        "rpath": [t.entry.d_tag for t in tags if t.entry.d_tag in ("DT_RPATH", "DT_RUNPATH")],
        "versions": versions,
        "exported": sorted(s.name for s in syms if s.name and s["st_shndx"] != "SHN_UNDEF"),
        "undefined": sorted(s.name for s in syms if s.name and s["st_shndx"] == "SHN_UNDEF"),
    }


def assert_compliant(so: Path, ops_name: str) -> dict[str, object]:
    facts = elf_facts(so)
    too_new = []
    for version in facts["versions"]:  # type: ignore[attr-defined]
        lib, _, number = version.partition("_")
        if lib in CEILINGS:
            assert re.fullmatch(r"\d+(\.\d+)*", number), f"unparsable version {version}"
            if tuple(int(p) for p in number.split(".")) > CEILINGS[lib]:
                too_new.append(version)
    assert too_new == [], f"{so.name} needs symbol versions above manylinux_2_28: {too_new}"
    bad = [n for n in facts["needed"] if not ALLOWED_NEEDED.match(n)]  # type: ignore[attr-defined]
    assert bad == [], f"unexpected DT_NEEDED {bad}"
    assert facts["rpath"] == []
    assert facts["exported"] == [f"PyInit_{ops_name}"]
    private_py = [s for s in facts["undefined"] if s.startswith("_Py")]  # type: ignore[attr-defined]
    assert private_py == [], f"non-limited-API Python symbols: {private_py}"
    assert so.name == f"{ops_name}.abi3.so"
    return facts


def run_in_fresh_python(python: Path, variant_dir: Path, code: str) -> str:
    prelude = (
        "import importlib.util, sys\n"
        f"p = {str(variant_dir)!r}\n"
        "spec = importlib.util.spec_from_file_location('kk_variant', p + '/__init__.py',"
        " submodule_search_locations=[p])\n"
        "m = importlib.util.module_from_spec(spec); sys.modules['kk_variant'] = m\n"
        "spec.loader.exec_module(m)\n")
    proc = subprocess.run([str(python), "-c", prelude + code], capture_output=True, text=True,
                          cwd="/")
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


# --- probing (fast) ---------------------------------------------------------------------------


def test_probe_this_python() -> None:
    env = probe_python(PYTHON)
    import torch

    assert env.torch_version == torch.__version__
    assert env.cuda == torch.version.cuda
    assert env.cxx11_abi is True
    assert (env.torch_dir / "include" / "torch").is_dir()
    assert env.cmake_prefix_path.is_dir()
    assert env.machine == "x86_64" and env.os == "linux"


def test_probe_answers_from_its_cache_until_the_environment_changes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The second probe of an unchanged interpreter imports nothing (the cached answer); a change
    to what the answer depends on (here sys.path) or a damaged entry probes afresh."""
    import kernelkit.builder.toolchain.probe as probe

    monkeypatch.setenv("KERNELKIT_PROBE_CACHE", str(tmp_path / "probe"))
    monkeypatch.delenv("PYTHONPATH", raising=False)
    calls: list[Path] = []
    real = probe._probe

    def counting(python: Path) -> dict[str, object]:
        calls.append(python)
        return real(python)

    monkeypatch.setattr(probe, "_probe", counting)
    first = probe_python(PYTHON)
    assert probe_python(PYTHON) == first and len(calls) == 1
    assert probe_python(PYTHON).info == first.info and first.info["torch_version"]
    entries = list((tmp_path / "probe").glob("*.json"))
    assert len(entries) == 1
    entries[0].write_text("{not json")
    assert probe_python(PYTHON) == first and len(calls) == 2
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "elsewhere"))
    assert probe_python(PYTHON) == first and len(calls) == 3
    assert len(list((tmp_path / "probe").glob("*.json"))) == 2
    monkeypatch.setenv("KERNELKIT_PROBE_CACHE", "0")
    probe_python(PYTHON)
    assert len(calls) == 4


def test_probe_reads_torch_files_and_agrees_with_importing_it() -> None:
    """The probe never imports torch (its version file, libc10's mangled names and its paths
    say everything); importing it (KERNELKIT_PROBE_IMPORT=1) gives the same answer."""
    script = ROOT / "src" / "kernelkit" / "generate" / "torch_info.py"
    fast = subprocess.run([str(PYTHON), "-X", "importtime", str(script)], check=True,
                          capture_output=True, text=True)
    imported = [ln.split("|")[-1].strip() for ln in fast.stderr.splitlines() if "|" in ln]
    assert "torch" not in imported and "tvm_ffi" not in imported
    env = {**os.environ, "KERNELKIT_PROBE_IMPORT": "1"}
    slow = subprocess.run([str(PYTHON), str(script)], check=True, capture_output=True,
                          text=True, env=env)
    assert json.loads(fast.stdout) == json.loads(slow.stdout)
    import torch

    assert json.loads(fast.stdout)["torch_version"] == torch.__version__


def test_probe_imports_torch_when_its_files_do_not_say(tmp_path: Path) -> None:
    """A torch whose version.py is not plain literals is imported after all."""
    fake = tmp_path / "site" / "torch"
    (fake / "lib").mkdir(parents=True)
    (fake / "__init__.py").write_text(
        "__version__ = '9.9.0'\nclass version:\n    cuda = None\n    hip = None\n"
        "class _C:\n    _GLIBCXX_USE_CXX11_ABI = True\n")
    (fake / "version.py").write_text("__version__ = compute()\n")
    script = ROOT / "src" / "kernelkit" / "generate" / "torch_info.py"
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    out = subprocess.run([str(PYTHON), str(script)], check=True, capture_output=True,
                         text=True, env=env)
    info = json.loads(out.stdout)
    assert (info["torch_version"], info["cxx11_abi"]) == ("9.9.0", True)


def test_probe_python_without_torch(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "v")],
                   check=True)
    with pytest.raises(NotBuildableError, match="cannot import torch") as err:
        probe_python(tmp_path / "v" / "bin" / "python")
    assert "pip install torch" in str(err.value)


# --- CPU --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cpu_build(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    project = copy_project(tmp_path_factory.mktemp("cpu") / "addone")
    proc = subprocess.run([sys.executable, "-m", "kernelkit", "build", str(project),
                           "--python", str(PYTHON)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return project, project / "build" / CPU_VARIANT, proc.stdout


@pytest.mark.slow
def test_cpu_build_layout_and_metadata(cpu_build: tuple[Path, Path, str]) -> None:
    project, variant, stdout = cpu_build
    assert re.fullmatch(rf"built   {CPU_VARIANT}  {re.escape(str(variant))}  \d+\.\d s\n"
                        r"1 built, 0 cached, 0 failed, 0 skipped\n", stdout)
    meta = Metadata.read(variant / "metadata.json")
    assert meta.id == f"_addone_cpu_{build_id(load_manifest(project))}"
    assert meta.backend == "cpu" and meta.archs is None
    assert meta.provenance is not None and meta.provenance.builder_version == "kernelkit/0.1.0"
    assert meta.provenance.kernel is not None
    assert meta.provenance.kernel.commit == git(project, "rev-parse", "HEAD")
    files = sorted(p.relative_to(variant).as_posix() for p in variant.rglob("*") if p.is_file())
    assert files == sorted(["__init__.py", "_ops.py", "layers/__init__.py", "metadata.json",
                            "symbols.json", f"{meta.id}.abi3.so"])  # notes.json: not in pyext
    assert meta.digest is not None and meta.digest.verify(variant) == []
    assert f"from . import {meta.id}" in (variant / "_ops.py").read_text()
    assert json.loads((variant / "metadata.json").read_text())["backend"] == {"type": "cpu"}
    assert not (project / "CMakeLists.txt").exists()  # generated elsewhere, not in sources
    # CMake read the probe's answer (KK_TORCH_INFO) instead of importing torch a third time.
    work = project / "_cmake_build" / CPU_VARIANT
    assert json.loads((work / "torch_info.json").read_text())["torch_version"]
    assert not (work / "cmake-build" / "kernelkit_torch_info.json").exists()


@pytest.mark.slow
def test_cpu_variant_imports_and_runs(cpu_build: tuple[Path, Path, str]) -> None:
    _, variant, _ = cpu_build
    out = run_in_fresh_python(PYTHON, variant, (
        "import torch\n"
        "x = torch.arange(6, dtype=torch.float32).reshape(2, 3)\n"
        "assert torch.equal(m.add_one(x), x + 1)\n"
        "assert torch.equal(m.layers.AddOne()(x), x + 1)\n"
        "print(m.add_op_namespace_prefix('add_one'))\n"))
    assert out.strip() == Metadata.read(variant / "metadata.json").id + "::add_one"


@pytest.mark.slow
def test_cpu_extension_is_manylinux_2_28_and_abi3(cpu_build: tuple[Path, Path, str]) -> None:
    _, variant, _ = cpu_build
    meta = Metadata.read(variant / "metadata.json")
    facts = assert_compliant(variant / f"{meta.id}.abi3.so", meta.id)
    # the shims really replaced what gcc 12 / glibc 2.36 would have pulled in
    assert "__libc_single_threaded" not in facts["undefined"]  # type: ignore[operator]
    assert "_ZSt28__throw_bad_array_new_lengthv" not in facts["undefined"]  # type: ignore[operator]


@pytest.mark.slow
def test_broken_source_fails_and_keeps_previous_build(
        cpu_build: tuple[Path, Path, str], tmp_path: Path) -> None:
    project = tmp_path / "broken"
    shutil.copytree(cpu_build[0], project)
    variant = project / "build" / CPU_VARIANT
    before = Digest.of_variant(variant).files
    src = project / "addone_cpu" / "addone_cpu.cpp"
    src.write_text(src.read_text() + "\nint broken( { return not_declared_anywhere; }\n")
    with pytest.raises(BuildError) as err:
        build(project, python=PYTHON, backends=["cpu"])
    message = str(err.value)
    assert err.value.variant == CPU_VARIANT
    assert f"build of variant {CPU_VARIANT} failed" in message
    assert "addone_cpu.cpp" in message and "error:" in message
    assert err.value.log_path is not None and err.value.log_path.is_file()
    assert Digest.of_variant(variant).files == before  # previous build untouched
    assert sorted(p.name for p in (project / "build").iterdir()) == [CPU_VARIANT]


@pytest.mark.slow
def test_editable_install_dev_loop(tmp_path: Path) -> None:
    """create-pyproject, then `pip install --no-build-isolation -e .` into a throwaway venv that
    sees this venv's packages (torch, setuptools, cmake, ninja) through a .pth file."""
    project = copy_project(tmp_path / "addone", with_git=False)
    env = {**os.environ, "PYTHONNOUSERSITE": "1"}
    subprocess.run([sys.executable, "-m", "kernelkit", "create-pyproject", str(project),
                    "--unique-id", "dev0001"], check=True, env=env, capture_output=True)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    import sysconfig

    site = next(venv.glob("lib/python*/site-packages"))
    (site / "kk_parent.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    vpy = venv / "bin" / "python"
    pip = subprocess.run([str(vpy), "-m", "pip", "install", "--no-build-isolation", "--no-deps",
                          "--no-index", "-e", str(project)], capture_output=True, text=True,
                         env=env)
    assert pip.returncode == 0, pip.stdout[-3000:] + pip.stderr[-3000:]
    code = ("import torch, addone\nx = torch.ones(3)\n"
            "assert torch.equal(addone.add_one(x), x + 1)\n"
            "print(addone.add_op_namespace_prefix('add_one'))\n")
    run = subprocess.run([str(vpy), "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip() == "_addone_cpu_dev0001::add_one"
    assert list((project / "torch-ext" / "addone").glob("_addone_cpu_dev0001*.so"))
    subprocess.run([sys.executable, "-m", "kernelkit", "clean", str(project)], check=True,
                   capture_output=True)
    assert not (project / "_cmake_build").exists()
    assert not list((project / "torch-ext" / "addone").glob("*.so"))
    assert (project / "addone_cpu" / "addone_cpu.cpp").is_file()


# --- CUDA -------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.cuda_build
def test_cuda_build_capability_9_0(tmp_path: Path, cuda_torch_python: Path) -> None:
    python = cuda_torch_python
    env = probe_python(python)
    if not env.cuda:
        pytest.skip(f"{python} has no CUDA torch")
    project = copy_project(tmp_path / "addone")
    results = build(project, python=python, backends=["cuda"], cuda_capabilities=["9.0"])
    assert [r.variant for r in results] == [
        (f"torch{env.torch_release.replace('.', '')[:3]}-cxx11-cu"
        f"{env.cuda.replace('.', '')}-x86_64-linux")]
    result = results[0]
    meta = Metadata.read(result.path / "metadata.json")
    assert meta.backend == "cuda" and meta.archs == ("9.0",)
    assert meta.provenance is not None
    assert meta.provenance.extra["cuda-toolkit"] == env.cuda
    so = result.path / f"{meta.id}.abi3.so"
    facts = assert_compliant(so, meta.id)
    assert any(n.startswith("libcudart.so") for n in facts["needed"])  # type: ignore[attr-defined]
    gencodes = set(re.findall(r"-gencode=\S+", result.log_path.read_text()))
    assert gencodes == {"-gencode=arch=compute_90,code=sm_90"}  # one capability, no PTX
    cuobjdump = shutil.which("cuobjdump") or "/usr/local/cuda/bin/cuobjdump"
    if Path(cuobjdump).exists():
        listing = subprocess.run([cuobjdump, "--list-elf", str(so)], capture_output=True,
                                 text=True).stdout
        assert set(re.findall(r"sm_\d+a?", listing)) == {"sm_90"}
    # importing works without a GPU and registers the op under the variant's namespace
    out = run_in_fresh_python(python, result.path,
                              "print(m.ops.add_one.default._schema.name)\n")
    assert out.strip() == f"{meta.id}::add_one"
