"""Python dependencies declared in metadata.json are checked before a kernel is imported."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pytest
from helpers import make_variant

from kernelkit.artifact.layout import seal_variant
from kernelkit.artifact.metadata import Metadata
from kernelkit.errors import KernelDependencyError, UnsupportedDependencyError
from kernelkit.loader.api import get_local_kernel


def _variant_needing(tmp_path: Path, deps: tuple[str, ...], uid: str) -> Path:
    vdir = make_variant(tmp_path / "build", "torch213-cxx11-cpu-x86_64-linux", name="needs",
                        uid=uid)
    meta = Metadata.read(vdir / "metadata.json")
    seal_variant(vdir, replace(meta, python_depends=deps, digest=None))
    return vdir


def test_missing_package_names_the_pip_command(tmp_path: Path) -> None:
    vdir = _variant_needing(tmp_path, ("einops",), uid="dep0001")
    with pytest.raises(KernelDependencyError, match="pip install einops") as err:
        get_local_kernel(vdir)
    assert isinstance(err.value, ImportError)
    assert "_needs_cpu_dep0001" not in sys.modules  # never imported


def test_unknown_dependency_id_is_refused(tmp_path: Path) -> None:
    vdir = _variant_needing(tmp_path, ("kepler-22b",), uid="dep0002")
    with pytest.raises(UnsupportedDependencyError, match="unsupported kernel dependency: kepler"):
        get_local_kernel(vdir)


def test_installed_dependency_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    (site / "einops").mkdir(parents=True)
    (site / "einops" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(site))
    vdir = _variant_needing(tmp_path, ("einops", "torch"), uid="dep0003")
    assert get_local_kernel(vdir).VERSION_TAG == "v1"
