"""``kernelkit check`` catches what crashes users and stops blaming what is fine (issue 23
item 3): a fixed TORCH_LIBRARY namespace in a really compiled kernel, an op declared without an
implementation for the variant's backend, a noarch package whose ``__init__`` does not import
``_ops``. Real builds and real subprocess imports."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from kernelkit.artifact.layout import seal_variant
from kernelkit.artifact.metadata import Metadata
from kernelkit.builder.api import build
from kernelkit.check import check_build
from tests.helpers import make_variant


def _codes(report: object) -> dict[str, list[object]]:
    out: dict[str, list[object]] = {}
    for f in report.findings:  # type: ignore[attr-defined]
        out.setdefault(f.code, []).append(f)
    return out


@pytest.mark.slow
def test_a_fixed_torch_library_namespace_is_an_error_naming_the_file(
        img2gray_project: Path, img2gray_cpu_build: Path, tmp_path: Path) -> None:
    project = tmp_path / "img2gray"
    shutil.copytree(img2gray_project, project, ignore=shutil.ignore_patterns("build", ".git"))
    binding = project / "torch-ext" / "torch_binding.cpp"
    text = binding.read_text()
    assert "TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, ops)" in text
    binding.write_text(text.replace("TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, ops)",
                                    "TORCH_LIBRARY(img2gray, ops)"))
    [result] = build(project, python=Path(sys.executable), backends=["cpu"])
    report = check_build(result.path)
    [fixed] = _codes(report)["fixed-namespace"]
    assert fixed.severity == "error" and fixed.file == "torch-ext/torch_binding.cpp"
    assert "'img2gray'" in fixed.message and "torch-ext/torch_binding.cpp:" in fixed.message
    assert "TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, ops)" in fixed.fix
    assert not check_build(img2gray_cpu_build).errors  # the template's own build: clean


UNIMPLEMENTED = '''\
import torch

from ._ops import ops

_lib = torch.library.Library({ns!r}, "DEF")
_lib.define("scale(Tensor x) -> Tensor")
_lib.define("shift(Tensor x) -> Tensor")
_lib.impl("shift", lambda x: x + 1, "CompositeExplicitAutograd")
'''


def test_an_op_without_an_implementation_for_the_backend_is_an_error(tmp_path: Path) -> None:
    vdir = make_variant(tmp_path / "build", "torch-cpu")
    meta = Metadata.read(vdir / "metadata.json")
    (vdir / "__init__.py").write_text(UNIMPLEMENTED.format(ns=meta.id))
    seal_variant(vdir, meta)
    report = check_build(vdir)
    [missing] = _codes(report)["no-kernel"]
    assert f"{meta.id}::scale" in missing.message and "cpu" in missing.message
    assert 'ops.impl("scale", torch::kCPU' in missing.fix
    assert "shift" not in missing.message  # a composite kernel runs on every backend


NOARCH_INIT = '''\
import torch


def scale(x):
    return x * 2
'''


def test_a_noarch_package_that_does_not_import_ops_is_fine(tmp_path: Path) -> None:
    """Published noarch kernels are written like this; check imports _ops itself."""
    vdir = make_variant(tmp_path / "build", "torch-cpu")
    meta = Metadata.read(vdir / "metadata.json")
    (vdir / "__init__.py").write_text(NOARCH_INIT)
    seal_variant(vdir, meta)
    report = check_build(vdir)
    assert report.errors == [], [f.message for f in report.errors]
    # ...and a broken _ops.py is still found through that import
    (vdir / "_ops.py").write_text("import torch\nops = torch.ops.somewhere_else\n\n"
                                  "def add_op_namespace_prefix(name):\n"
                                  "    return 'somewhere_else::' + name\n")
    seal_variant(vdir, meta)
    [bad] = _codes(check_build(vdir))["ops-namespace"]
    assert bad.file == "_ops.py" and "somewhere_else" in bad.message


def test_python_ops_in_a_shared_namespace_are_an_error(tmp_path: Path) -> None:
    vdir = make_variant(tmp_path / "build", "torch-cpu")
    meta = Metadata.read(vdir / "metadata.json")
    (vdir / "__init__.py").write_text(
        "import torch\nfrom ._ops import ops\n"
        "_lib = torch.library.Library('shared_ops', 'FRAGMENT')\n"
        "_lib.define('mine(Tensor x) -> Tensor')\n")
    seal_variant(vdir, meta)
    [shared] = _codes(check_build(vdir))["fixed-namespace"]
    assert "'shared_ops'" in shared.message and shared.file is not None
    assert shared.file.endswith("__init__.py")
