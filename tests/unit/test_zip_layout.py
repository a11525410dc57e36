"""kernels 0.19's ``zip`` build layout and ``agnostic`` backend: read, loaded, checked."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from kernelkit.artifact.metadata import Metadata
from kernelkit.errors import KernelModuleNotFoundError, MetadataError
from tests.helpers import make_variant, to_zip_layout

CPU = "torch213-cxx11-cpu-x86_64-linux"


def _meta_json(**extra: object) -> str:
    base = {"name": "demo", "id": "_demo_cpu_abc1234", "version": 1, "license": "MIT",
            "backend": {"type": "cpu"}}
    return json.dumps(base | extra)


def test_build_layout_is_read_and_written_only_when_zip() -> None:
    assert Metadata.loads(_meta_json()).build_layout == "files"
    zipped = Metadata.loads(_meta_json(**{"build-layout": "zip"}))
    assert zipped.build_layout == "zip" and zipped.to_json()["build-layout"] == "zip"
    assert "build-layout" not in Metadata.loads(_meta_json(**{"build-layout": "files"})).to_json()
    with pytest.raises(MetadataError, match="'build-layout' must be one of files, zip, not 'ZIP'"):
        Metadata.loads(_meta_json(**{"build-layout": "ZIP"}))  # lower-case only, as upstream


def test_agnostic_backend_parses() -> None:
    assert Metadata.loads(_meta_json(backend={"type": "agnostic"})).backend == "agnostic"


def test_zip_layout_variant_loads(tmp_path: Path) -> None:
    import torch

    from kernelkit import get_local_kernel

    vdir = to_zip_layout(make_variant(tmp_path / "build", CPU, name="zipped", uid="a1b2c3d",
                                      factor=3.0))
    assert sorted(p.name for p in vdir.iterdir()) == [
        "_zipped_cpu_a1b2c3d.zip", "metadata.json", "symbols.json"]
    kernel = get_local_kernel(vdir)
    assert kernel.scale(torch.ones(2)).tolist() == [3.0, 3.0]
    assert kernel.__file__ == f"{vdir.resolve()}/_zipped_cpu_a1b2c3d.zip/__init__.py"
    # symbols.json was read from inside the archive
    assert json.loads((vdir / "symbols.json").read_text())["functions"] == [{"name": "scale"}]


def test_zip_layout_without_its_archive_is_a_clear_error(tmp_path: Path) -> None:
    from kernelkit.loader.importer import import_variant

    vdir = to_zip_layout(make_variant(tmp_path / "build", CPU, name="gone", uid="d4e5f6a"))
    (vdir / "_gone_cpu_d4e5f6a.zip").unlink()
    with pytest.raises(KernelModuleNotFoundError, match="No kernel archive found at"):
        import_variant(vdir.resolve())
    assert not any(m.startswith("_kernelkit_gone_") for m in sys.modules)


def test_check_agnostic_backend_only_without_compiled_code(tmp_path: Path) -> None:
    from kernelkit.check import check_build

    for variant in ("torch-universal", "sdk", "torch-cpu"):
        vdir = make_variant(tmp_path / "a", variant, name="ag", uid="c1c2c3c", backend="agnostic")
        codes = {f.code for f in check_build(vdir, import_check=False).findings}
        assert "backend-mismatch" not in codes, variant
    arch = make_variant(tmp_path / "b", CPU, name="ag", uid="c1c2c3c", backend="agnostic")
    codes = {f.code for f in check_build(arch, import_check=False).findings}
    assert "backend-mismatch" in codes  # an arch build is built for one backend
