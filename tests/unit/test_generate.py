"""Generated build files: golden files for img2gray, ordering, the writer, ``_ops.py``."""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

from kernelkit.errors import KernelkitError
from kernelkit.generate import project_files, write_files
from kernelkit.generate.python import render_ops_py
from kernelkit.manifest import parse_manifest

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden" / "img2gray"
EXPECTED = GOLDEN / "expected"
UID = "abc1234"
# KERNELKIT_UPDATE_GOLDEN=1 rewrites the golden files from the current generators.
UPDATE = os.environ.get("KERNELKIT_UPDATE_GOLDEN") == "1"


def img2gray_files() -> dict[str, str]:
    manifest = parse_manifest((GOLDEN / "build.toml").read_text("utf-8"))
    return project_files(manifest, UID)


def test_golden_file_set() -> None:
    files = img2gray_files()
    if UPDATE:
        write_files(EXPECTED, files, force=True)
    on_disk = sorted(p.relative_to(EXPECTED).as_posix() for p in EXPECTED.rglob("*") if p.is_file())
    assert sorted(files) == on_disk
    assert set(files) >= {"CMakeLists.txt", "setup.py", "pyproject.toml",
                          "torch-ext/registration.h", "torch-ext/img2gray/_ops.py",
                          "cmake/kernelkit.cmake", "cmake/kernelkit_compat.c"}


@pytest.mark.parametrize("rel", sorted(img2gray_files()))
def test_golden_file_content(rel: str) -> None:
    assert img2gray_files()[rel] == (EXPECTED / rel).read_text("utf-8"), (
        f"{rel} differs from the golden file; if intended, regenerate with "
        "KERNELKIT_UPDATE_GOLDEN=1")


def test_generation_is_deterministic_and_sorted() -> None:
    text = (GOLDEN / "build.toml").read_text("utf-8")
    # The same kernels declared in the opposite order give the same files.
    head, rest = text.split("[kernel.img2gray]")
    cuda, cpu = rest.split("[kernel.img2gray_cpu]")
    swapped = head + "[kernel.img2gray_cpu]" + cpu + "\n[kernel.img2gray]" + cuda
    assert project_files(parse_manifest(swapped), UID) == img2gray_files()
    cmake = img2gray_files()["CMakeLists.txt"]
    assert cmake.index("kk_cuda_component(img2gray") < cmake.index("kk_cpu_component(img2gray_cpu")


def test_generated_python_is_valid() -> None:
    files = img2gray_files()
    for rel, text in files.items():
        if rel.endswith(".py"):
            ast.parse(text, rel)
    assert 'UNIQUE_ID = "abc1234"' in files["setup.py"]
    assert "CUDA_COMPONENTS = {'img2gray': None}" in files["setup.py"]


def test_ops_py_bakes_the_namespace() -> None:
    text = render_ops_py("img2gray", UID, "cuda")
    assert "from . import _img2gray_cuda_abc1234" in text
    assert "ops = torch.ops._img2gray_cuda_abc1234" in text
    ns: dict[str, object] = {}
    # add_op_namespace_prefix works without importing the extension
    func_src = text[text.index("def add_op_namespace_prefix"):]
    exec(func_src, ns)
    assert ns["add_op_namespace_prefix"]("gray") == "_img2gray_cuda_abc1234::gray"  # type: ignore[operator]


def test_write_files_skips_unchanged_and_refuses_differing(tmp_path: Path) -> None:
    files = {"a.txt": "one\n", "sub/b.txt": "two\n"}
    assert sorted(p.name for p in write_files(tmp_path, files)) == ["a.txt", "b.txt"]
    assert write_files(tmp_path, files) == []  # unchanged: nothing written
    (tmp_path / "a.txt").write_text("edited\n")
    with pytest.raises(KernelkitError) as err:
        write_files(tmp_path, {**files, "c.txt": "three\n"})
    assert str(tmp_path / "a.txt") in str(err.value)
    assert "--force" in str(err.value)
    assert not (tmp_path / "c.txt").exists()  # nothing written when refusing
    assert write_files(tmp_path, files, force=True) == [tmp_path / "a.txt"]
    assert (tmp_path / "a.txt").read_text() == "one\n"
