"""builder/compile/noarch.py: a noarch variant laid out, named and sealed as upstream's (no
compile)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from kernelkit.artifact.metadata import Metadata
from kernelkit.builder.compile.noarch import build_noarch
from kernelkit.errors import NotBuildableError
from kernelkit.manifest import load_manifest

BUILD_TOML = """[general]
name = "my-kern"
version = 3
edition = 5
license = "MIT"
backends = ["cpu", "cuda", "rocm"]
python-depends = ["einops"]

[torch-noarch]
pyext = ["py", "json"]
cuda_capabilities = ["9.0", "8.0"]
rocm_archs = ["gfx942"]
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    proj = tmp_path / "my-kern"
    pkg = proj / "torch-ext" / "my_kern"
    (pkg / "configs").mkdir(parents=True)
    (proj / "build.toml").write_text(BUILD_TOML)
    (pkg / "__init__.py").write_text("from ._ops import ops\n")
    (pkg / "configs" / "a.json").write_text("{}")
    (pkg / "notes.txt").write_text("not shipped: txt is not in pyext")
    (pkg / "_ops.py").write_text("# a stale checked-in one: the build writes its own\n")
    (pkg / "__pycache__").mkdir()
    (pkg / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
    return proj


def test_layout_metadata_and_ops(project: Path, tmp_path: Path) -> None:
    manifest = load_manifest(project)
    out = project / "build"
    res = build_noarch(manifest, "torch-cuda", "cuda", "abc1234", out_root=out, state=None,
                       log_path=tmp_path / "log" / "build.log")
    vdir = out / "torch-cuda"
    assert res.path == vdir and res.log_path.is_file()
    files = sorted(p.relative_to(vdir).as_posix() for p in vdir.rglob("*") if p.is_file())
    assert files == ["__init__.py", "_ops.py", "configs/a.json", "metadata.json", "symbols.json"]
    meta = Metadata.read(vdir / "metadata.json")
    assert (meta.name, meta.id, meta.version, meta.license) == ("my-kern", "_my_kern_cuda_abc1234",
                                                                3, "MIT")
    assert meta.backend == "cuda" and meta.archs == ("9.0", "8.0")  # verbatim, as upstream
    assert meta.python_depends == ("einops",)
    assert meta.digest is not None and not meta.digest.verify(vdir)
    assert sorted(meta.digest.files) == ["__init__.py", "_ops.py", "configs/a.json",
                                         "symbols.json"]  # symbols.json sealed too
    # _ops.py names the namespace after the importing torch's backend (CPU torch here).
    spec = importlib.util.spec_from_file_location("_kk_noarch_ops", vdir / "_ops.py")
    assert spec is not None and spec.loader is not None
    ops = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ops)
    import torch

    backend = "cuda" if torch.version.cuda else "cpu"
    assert ops.add_op_namespace_prefix("f") == f"_my_kern_{backend}_abc1234::f"
    sys.modules.pop("_kk_noarch_ops", None)


def test_rebuild_replaces_and_other_backend_archs(project: Path, tmp_path: Path) -> None:
    manifest = load_manifest(project)
    out = project / "build"
    log = tmp_path / "build.log"
    build_noarch(manifest, "torch-rocm", "rocm", "u1", out_root=out, state=None, log_path=log)
    (out / "torch-rocm" / "stale.py").write_text("")
    build_noarch(manifest, "torch-rocm", "rocm", "u2", out_root=out, state=None, log_path=log)
    assert not (out / "torch-rocm" / "stale.py").exists()
    meta = Metadata.read(out / "torch-rocm" / "metadata.json")
    assert (meta.id, meta.archs) == ("_my_kern_rocm_u2", ("gfx942",))
    build_noarch(manifest, "torch-cpu", "cpu", "u2", out_root=out, state=None, log_path=log)
    assert Metadata.read(out / "torch-cpu" / "metadata.json").archs is None
    assert sorted(p.name for p in out.iterdir()) == ["torch-cpu", "torch-rocm"]  # no temp dirs


def test_missing_package_is_the_projects_fault(project: Path, tmp_path: Path) -> None:
    (project / "torch-ext" / "my_kern" / "__init__.py").unlink()
    with pytest.raises(NotBuildableError, match="the project is wrong") as err:
        build_noarch(load_manifest(project), "torch-cpu", "cpu", "u", out_root=project / "build",
                     state=None, log_path=tmp_path / "l")
    assert err.value.who == "project" and not (project / "build" / "torch-cpu").exists()
