"""check --import on a zip-layout variant.

Moved from tests/unit/test_zip_layout.py: the import check starts a fresh interpreter.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from tests.helpers import make_variant, to_zip_layout


def test_check_accepts_a_zip_layout_and_names_its_missing_parts(tmp_path: Path) -> None:
    from kernelkit.check import check_build

    # a synthetic variant has no compiled extension: a noarch name, so none is expected
    vdir = to_zip_layout(make_variant(tmp_path / "build", "torch-cpu", name="zc", uid="b1b2b3b"))
    report = check_build(vdir, import_check=True)
    assert [f for f in report.findings if f.severity == "error"] == []
    assert {f.code for f in report.findings} <= {"no-fake"}  # imported from the archive
    # an archive without _ops.py
    archive = vdir / "_zc_cpu_b1b2b3b.zip"
    with zipfile.ZipFile(archive) as zf:
        init = zf.read("__init__.py")
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("__init__.py", init)
    codes = {f.code: f for f in check_build(vdir, import_check=False).findings}
    assert codes["missing-ops"].message == "_zc_cpu_b1b2b3b.zip has no _ops.py at its root"
    assert "missing-init" not in codes and "digest-mismatch" in codes
