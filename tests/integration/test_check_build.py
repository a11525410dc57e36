"""kernelkit check on real build trees: gcc-built shared libraries, real subprocess imports."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kernelkit.artifact.layout import seal_variant
from kernelkit.artifact.metadata import Metadata
from kernelkit.check import Finding, Report, check_build
from kernelkit.cli.main import main
from tests.helpers import make_variant

DATA = Path(__file__).parent.parent / "data" / "check"
CPU = "torch213-cxx11-cpu-x86_64-linux"
NS = "_demo_cpu_abc1234"


def _glibc() -> tuple[int, ...]:
    text = os.confstr("CS_GNU_LIBC_VERSION") or "glibc 0.0"
    return tuple(int(p) for p in text.split()[1].split("."))


@pytest.fixture(scope="module")
def libs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    if shutil.which("gcc") is None:
        pytest.skip("needs gcc")
    out = tmp_path_factory.mktemp("so")
    cmds = {
        "noncompliant": ["-l:libz.so.1", "-Wl,-rpath,/opt/elsewhere/lib"],
        "compliant": ["-Wl,-rpath,$ORIGIN/lib"],
    }
    built = {}
    for name, extra in cmds.items():
        so = out / f"{name}.so"
        subprocess.run(["gcc", "-shared", "-fPIC", "-O1", str(DATA / f"{name}.c"), "-o", str(so),
                        *extra], check=True)
        built[name] = so
    return built


def reseal(vdir: Path) -> None:
    seal_variant(vdir, Metadata.read(vdir / "metadata.json"))


def arch_variant(build: Path, lib: Path | None, variant: str = CPU, **kw: object) -> Path:
    vdir = make_variant(build, variant, **kw)  # type: ignore[arg-type]
    if lib is not None:
        meta = Metadata.read(vdir / "metadata.json")
        shutil.copy(lib, vdir / f"{meta.id}.abi3.so")
        reseal(vdir)
    return vdir


def static(path: Path) -> Report:
    return check_build(path, import_check=False)


# --- ELF policy -------------------------------------------------------------------------------


def test_noncompliant_library_fires_every_elf_code(tmp_path: Path, libs: dict[str, Path]) -> None:
    arch_variant(tmp_path / "build", libs["noncompliant"])
    report = static(tmp_path)
    assert report.variants == (CPU,)
    by_code: dict[str, list[Finding]] = {}
    for f in report.findings:
        by_code.setdefault(f.code, []).append(f)
        assert f.variant == CPU and f.fix
    assert {"abi3", "needed-library", "rpath"} <= set(by_code)
    abi3 = " ".join(f.message for f in by_code["abi3"])
    assert "_PyObject_GetDictPtr" in abi3 and "PyUnicode_AsUTF8AndSize" in abi3 and "3.10" in abi3
    assert [f.message for f in by_code["needed-library"]] == [
        "DT_NEEDED libz.so.1 is not an allowed dependency"]
    assert "/opt/elsewhere/lib" in by_code["rpath"][0].message
    assert all(f.file == f"{NS}.abi3.so" for f in by_code["abi3"])
    if _glibc() >= (2, 34):
        manylinux = " ".join(f.message for f in by_code["manylinux"])
        assert "pthread_create@GLIBC_2.34" in manylinux
        assert "__libc_single_threaded@GLIBC_2.32" in manylinux
    assert not report.ok


def test_compliant_library_passes(tmp_path: Path, libs: dict[str, Path]) -> None:
    arch_variant(tmp_path / "build", libs["compliant"])
    report = static(tmp_path)
    assert report.findings == ()
    assert report.ok


def test_garbage_library_is_unreadable(tmp_path: Path) -> None:
    vdir = make_variant(tmp_path, CPU)
    (vdir / f"{NS}.abi3.so").write_bytes(b"not an ELF file")
    reseal(vdir)
    assert static(tmp_path).codes() == {"unreadable-elf"}


# --- layout, metadata, digest -------------------------------------------------------------------


def test_digest_mismatch_after_a_flipped_byte(tmp_path: Path, libs: dict[str, Path]) -> None:
    vdir = arch_variant(tmp_path, libs["compliant"])
    so = vdir / f"{NS}.abi3.so"
    data = bytearray(so.read_bytes())
    data[-1] ^= 0xFF
    so.write_bytes(bytes(data))
    (vdir / "extra.py").write_text("X = 1\n")
    report = static(tmp_path)
    mismatches = {f.file: f.message for f in report.findings if f.code == "digest-mismatch"}
    assert set(mismatches) == {f"{NS}.abi3.so", "extra.py"}
    assert "does not match" in mismatches[f"{NS}.abi3.so"]
    assert "not listed" in mismatches["extra.py"]


def test_missing_and_invalid_metadata(tmp_path: Path) -> None:
    a = make_variant(tmp_path, "torch-cpu")
    (a / "metadata.json").unlink()
    b = make_variant(tmp_path, "torch-cuda")
    (b / "metadata.json").write_text('{"name": "demo"}')
    report = static(tmp_path)
    assert report.codes("torch-cpu") == {"missing-metadata"}
    assert report.codes("torch-cuda") == {"invalid-metadata"}
    assert "missing required key" in report.errors[-1].message


def test_bad_layout(tmp_path: Path, libs: dict[str, Path]) -> None:
    vdir = arch_variant(tmp_path, libs["compliant"])
    (vdir / "_ops.py").unlink()
    (vdir / "_cmake_build" / "CMakeFiles").mkdir(parents=True)
    (vdir / "_cmake_build" / "CMakeFiles" / "x.o").write_bytes(b"")
    shutil.copy(libs["compliant"], vdir / "libhelper.so")
    reseal(vdir)  # (sealing removes bytecode, so add it afterwards: the digest skips it)
    (vdir / "__pycache__").mkdir()
    (vdir / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"")
    report = static(tmp_path)
    codes = {f.code: f for f in report.findings}
    assert set(codes) == {"missing-ops", "stray-file", "bytecode", "extra-extension"}
    assert codes["stray-file"].file == "_cmake_build"
    assert codes["extra-extension"].file == "libhelper.so"
    assert codes["bytecode"].severity == "warning"


def test_missing_extension_and_bad_directory_name(tmp_path: Path) -> None:
    make_variant(tmp_path / "build", CPU)
    make_variant(tmp_path / "build", "not-a-variant")
    report = static(tmp_path)
    assert report.codes(CPU) == {"missing-extension"}
    assert "variant-name" in report.codes("not-a-variant")


def test_metadata_consistency(tmp_path: Path) -> None:
    build = tmp_path / "build"
    make_variant(build, "torch-cuda", backend="cpu")
    make_variant(build, "torch-cpu", uid="x")
    make_variant(build, "torch-xpu", backend="xpu", uid="abc1234_dirty", version=2)
    report = static(tmp_path)
    assert report.codes("torch-cuda") == {"backend-mismatch"}
    assert report.codes("torch-cpu") == {"bad-id"}
    assert report.codes("torch-xpu") == {"dirty-build"}
    tree = report.codes("")
    assert tree == {"inconsistent-kernel", "namespace-mismatch"}  # two cpu ids, v1 and v2


def test_unprefixed_registration_is_an_error(tmp_path: Path) -> None:
    vdir = make_variant(tmp_path, "torch-cpu")
    init = vdir / "__init__.py"
    before = init.read_text()
    init.write_text(before + '\n@torch.library.register_fake("demo::scale")\n'
                    "def _fake(x):\n    return torch.empty_like(x)\n")
    reseal(vdir)
    [f] = static(tmp_path).findings
    assert f.code == "op-registration" and f.file == "__init__.py"
    assert f"__init__.py:{before.count(chr(10)) + 2}: @register_fake on _fake" in f.message


def test_no_variants(tmp_path: Path) -> None:
    report = static(tmp_path)
    assert report.codes() == {"no-variants"} and not report.ok


# --- import in a fresh interpreter ----------------------------------------------------------------


def test_import_of_a_good_variant_is_clean(tmp_path: Path) -> None:
    vdir = make_variant(tmp_path / "build", "torch-cpu")
    report = check_build(vdir)  # a single variant directory
    assert report.variants == ("torch-cpu",)
    assert report.findings == ()


def test_import_failure_and_skips(tmp_path: Path) -> None:
    build = tmp_path / "build"
    broken = make_variant(build, "torch-cpu")
    (broken / "__init__.py").write_text("raise RuntimeError('kaboom at import')\n")
    reseal(broken)
    make_variant(build, "torch-cuda")
    make_variant(build, "torch299-cxx11-cpu-x86_64-linux", uid="abc1234")
    report = check_build(tmp_path, python=Path(sys.executable))
    failed = [f for f in report.findings if f.code == "import-failed"]
    assert len(failed) == 1 and "kaboom at import" in failed[0].message
    skipped = {f.variant: f for f in report.findings if f.code == "import-skipped"}
    assert "CUDA build of torch" in skipped["torch-cuda"].message
    assert "--variant-python torch-cuda=" in skipped["torch-cuda"].fix
    assert "needs torch 2.99" in skipped["torch299-cxx11-cpu-x86_64-linux"].message
    assert skipped["torch-cuda"].severity == "warning"


def test_ops_without_fake_and_wrong_namespace(tmp_path: Path) -> None:
    build = tmp_path / "build"
    nofake = make_variant(build, "torch-cpu")
    init = nofake / "__init__.py"
    init.write_text(init.read_text().replace('"CompositeExplicitAutograd"', '"CPU"'))
    reseal(nofake)
    wrong = make_variant(build, "torch-cuda", uid="def5678")
    ops = wrong / "_ops.py"
    ops.write_text(ops.read_text().replace("'_demo_cuda_def5678' + \"::\"", "'other' + \"::\""))
    reseal(wrong)
    report = check_build(tmp_path, variant_pythons={"torch-cuda": Path(sys.executable)},
                         python=Path(sys.executable))
    [nf] = [f for f in report.findings if f.code == "no-fake"]
    assert nf.variant == "torch-cpu" and "_demo_cpu_abc1234::scale" in nf.message
    # torch-cuda is skipped on a CPU torch, so its namespace is not checked here
    assert "ops-namespace" not in report.codes()


@pytest.mark.slow
@pytest.mark.cuda_build
def test_variant_python_is_used(tmp_path: Path, cuda_torch_python: Path) -> None:
    cuda_python = cuda_torch_python
    wrong = make_variant(tmp_path, "torch-cuda", uid="def5678")
    ops = wrong / "_ops.py"
    ops.write_text(ops.read_text().replace("'_demo_cuda_def5678' + \"::\"", "'other' + \"::\""))
    reseal(wrong)
    report = check_build(tmp_path, variant_pythons={"torch-cuda": cuda_python})
    assert report.codes() == {"ops-namespace"}


# --- CLI ---------------------------------------------------------------------------------------


def test_cli_check(tmp_path: Path, libs: dict[str, Path],
                   capsys: pytest.CaptureFixture[str]) -> None:
    arch_variant(tmp_path / "build", libs["noncompliant"])
    assert main(["check", str(tmp_path), "--no-import", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] is False and data["variants"] == [CPU]
    assert {"needed-library", "abi3", "rpath"} <= {f["code"] for f in data["findings"]}
    assert main(["check", str(tmp_path), "--no-import"]) == 1
    text = capsys.readouterr().out
    assert f"{CPU}:" in text and "fix:" in text and "error(s)" in text
    good = tmp_path / "good"
    arch_variant(good / "build", libs["compliant"])
    assert main(["check", str(good), "--no-import"]) == 0
