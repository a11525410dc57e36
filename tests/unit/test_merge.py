"""``kernelkit merge``: shards of synthetic (sealed, real-layout) build trees -> one tree."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kernelkit.artifact.layout import discover_variants
from kernelkit.artifact.merge import merge_build_trees
from kernelkit.artifact.metadata import Metadata
from kernelkit.cli.main import main
from kernelkit.errors import MergeError
from tests.helpers import make_variant

CPU = "torch213-cxx11-cpu-x86_64-linux"
CU = "torch213-cxx11-cu128-x86_64-linux"
CU2 = "torch214-cxx11-cu130-x86_64-linux"


def shards(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "shard-1" / "build", tmp_path / "shard-2" / "build"
    make_variant(a, CPU)
    make_variant(a, CU)
    make_variant(b, CU2)
    return a, b


def test_merges_every_variant_and_keeps_digests(tmp_path: Path) -> None:
    a, b = shards(tmp_path)
    out = tmp_path / "merged" / "build"
    result = merge_build_trees(out, [a, b])
    assert list(result.variants) == sorted([CPU, CU, CU2])
    assert result.variants[CU2] == (b,)
    tree = discover_variants(out)
    assert tree is not None and tree.names == sorted([CPU, CU, CU2])
    for vdir in tree.variants:
        meta = Metadata.read(vdir / "metadata.json")
        assert meta.digest is not None and meta.digest.verify(vdir) == []
        src = (a if vdir.name != CU2 else b) / vdir.name
        assert (vdir / "metadata.json").read_bytes() == (src / "metadata.json").read_bytes()
    assert [p.name for p in out.parent.iterdir()] == ["build"]  # no staging left behind


def test_project_dirs_and_identical_duplicates_are_accepted(tmp_path: Path) -> None:
    a, b = shards(tmp_path)
    shutil.copytree(a / CPU, b / CPU)  # e.g. a shard that also built the CPU variant
    (a / CPU / "__pycache__").mkdir()
    (a / CPU / "__pycache__" / "x.pyc").write_bytes(b"bytecode")  # not covered by the digest
    result = merge_build_trees(tmp_path / "out", [a.parent, b.parent])
    assert result.variants[CPU] == (a.parent, b.parent)
    assert not (tmp_path / "out" / CPU / "__pycache__").exists()


def test_conflicting_variant_names_both_shards(tmp_path: Path) -> None:
    a, b = shards(tmp_path)
    make_variant(b, CPU, factor=3.0)  # same name, different build
    out = tmp_path / "out"
    with pytest.raises(MergeError) as info:
        merge_build_trees(out, [a, b])
    err = info.value
    assert err.variant == CPU and err.shards == (a, b)
    assert f"variant {CPU} is in {a} and in {b} with different content" in str(err)
    assert "files differ: __init__.py" in str(err)
    assert not out.exists()


def test_tampered_file_is_refused(tmp_path: Path) -> None:
    a, b = shards(tmp_path)
    (b / CU2 / "_ops.py").write_text("# changed after the build\n")
    (b / CU2 / "extra.txt").write_text("not in the digest\n")
    with pytest.raises(MergeError, match=r"do not match the variant's digest: _ops.py: content") \
            as info:
        merge_build_trees(tmp_path / "out", [a, b])
    assert "extra.txt: present but not listed in the digest" in str(info.value)
    assert info.value.variant == CU2 and info.value.shards == (b,)


def test_variant_without_digest_is_refused(tmp_path: Path) -> None:
    a, _ = shards(tmp_path)
    meta = json.loads((a / CPU / "metadata.json").read_text())
    del meta["digest"]
    (a / CPU / "metadata.json").write_text(json.dumps(meta))
    with pytest.raises(MergeError, match=r"metadata\.json has no digest"):
        merge_build_trees(tmp_path / "out", [a])


def test_empty_shard_and_no_shards_are_refused(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(MergeError, match=r"empty: no variants found"):
        merge_build_trees(tmp_path / "out", [tmp_path / "empty"])
    with pytest.raises(MergeError, match="no shards"):
        merge_build_trees(tmp_path / "out", [])


def test_existing_output_needs_replace(tmp_path: Path) -> None:
    a, _b = shards(tmp_path)
    out = tmp_path / "out"
    make_variant(out, "torch-old")
    with pytest.raises(MergeError, match="already exists and is not empty"):
        merge_build_trees(out, [a])
    assert (out / "torch-old").is_dir()
    merge_build_trees(out, [a], replace=True)
    assert sorted(p.name for p in out.iterdir()) == sorted([CPU, CU])


def test_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = shards(tmp_path)
    assert main(["merge", str(tmp_path / "out"), str(a), str(b), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["variants"][CU2] == [str(b)]
    make_variant(b, CU, tag="v2")
    assert main(["merge", str(tmp_path / "out2"), str(a), str(b)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: variant {CU} is in {a} and in {b}")
