"""``kernelkit merge`` on a really compiled variant: two shards (one holding the img2gray CPU
build, one holding a synthetic variant plus an identical copy of the CPU build) merge into a
tree that ``kernelkit check`` passes (imports included) and that loads and runs."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
import torch

from kernelkit.cli.main import main
from tests.helpers import make_variant

pytestmark = pytest.mark.slow


def test_merged_real_build_checks_and_runs(img2gray_cpu_build: Path, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    shard1, shard2 = tmp_path / "shards" / "build-1", tmp_path / "shards" / "build-2"
    shutil.copytree(img2gray_cpu_build, shard1 / img2gray_cpu_build.name)
    shutil.copytree(img2gray_cpu_build, shard2 / img2gray_cpu_build.name)
    make_variant(shard2, "torch-universal", name="img2gray")
    out = tmp_path / "merged" / "build"
    assert main(["merge", str(out), str(shard1), str(shard2)]) == 0
    assert f"merged 2 variant(s) from 2 shard(s) into {out}" in capsys.readouterr().out

    from kernelkit import get_local_kernel
    from kernelkit.check import check_build

    report = check_build(out, python=Path(sys.executable))
    assert [f for f in report.findings if f.severity == "error"] == []
    kernel = get_local_kernel(out / img2gray_cpu_build.name)
    image = torch.full((2, 3, 3), 255, dtype=torch.uint8)
    assert kernel.img2gray(image).tolist() == [[255] * 3] * 2

    # tamper with the compiled library in one shard: the merge is refused, nothing written
    so = next((shard2 / img2gray_cpu_build.name).glob("*.so"))
    so.write_bytes(so.read_bytes() + b"\0")
    assert main(["merge", str(tmp_path / "again"), str(shard1), str(shard2)]) == 1
    assert f"{so.name}: content does not match its digest" in capsys.readouterr().err
    assert not (tmp_path / "again").exists()
