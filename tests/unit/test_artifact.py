"""Digests and metadata.json (upstream-builder.md §3.7, §3.9)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kernelkit.artifact.digest import Digest, bytes_digest
from kernelkit.artifact.layout import discover_variants, seal_variant
from kernelkit.artifact.metadata import Commit, Metadata, MetadataError, Provenance


def test_digest_spec_test_vector() -> None:
    assert bytes_digest(b"hello world") == "uU0nuZNNPgilLlLX2n2r+sSE7+N6U4DukIj3rOLvzek="


def test_variant_digest_skips_top_metadata_bytecode_and_pycache(tmp_path: Path) -> None:
    v = tmp_path / "torch213-cxx11-cpu-x86_64-linux"
    (v / "layers" / "__pycache__").mkdir(parents=True)
    (v / "__init__.py").write_text("hello world", newline="")
    (v / "layers" / "__init__.py").write_text("x")
    (v / "layers" / "metadata.json").write_text("{}")  # nested copies are hashed
    (v / "layers" / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
    (v / "stray.pyc").write_bytes(b"\0")
    (v / "metadata.json").write_text("{}")
    (v / "metadata.json.sigstore").write_text("{}")
    d = Digest.of_variant(v)
    assert list(d.files) == ["__init__.py", "layers/__init__.py", "layers/metadata.json"]
    assert d.files["__init__.py"] == "uU0nuZNNPgilLlLX2n2r+sSE7+N6U4DukIj3rOLvzek="


def test_digest_verify_reports_every_violation(tmp_path: Path) -> None:
    v = tmp_path / "v"
    v.mkdir()
    (v / "a.py").write_text("a")
    (v / "b.py").write_text("b")
    d = Digest.of_variant(v)
    assert d.verify(v) == []
    (v / "a.py").write_text("A")  # flipped content
    (v / "b.py").unlink()  # missing
    (v / "c.py").write_text("c")  # unknown
    kinds = sorted((x.kind, x.path) for x in d.verify(v))
    assert kinds == [("hash-mismatch", "a.py"), ("missing-file", "b.py"), ("unknown-file", "c.py")]


def _meta(**kw: object) -> Metadata:
    base: dict[str, object] = dict(name="img2gray", id="_img2gray_cpu_abc1234", version=1,
                                   license="Apache-2.0", backend="cpu")
    base.update(kw)
    return Metadata(**base)  # type: ignore[arg-type]


def test_metadata_key_order_and_round_trip(tmp_path: Path) -> None:
    prov = Provenance(builder_version="kernelkit/0.1.0", kernel=Commit("a" * 40, True),
                      extra={"toolchain": "sha256-x"})
    m = _meta(archs=("8.0", "9.0+PTX"), provenance=prov)
    v = tmp_path / "v"
    v.mkdir()
    (v / "__init__.py").write_text("")
    sealed = seal_variant(v, m)
    text = (v / "metadata.json").read_text()
    assert not text.endswith("\n")
    data = json.loads(text)
    assert list(data) == ["name", "id", "version", "license", "python-depends", "kernel-depends",
                          "backend", "digest", "provenance"]
    assert data["provenance"]["kernel-builder"] == {"version": "kernelkit/0.1.0"}
    assert data["provenance"]["kernelkit"] == {"toolchain": "sha256-x"}
    back = Metadata.read(v / "metadata.json")
    assert back == sealed
    assert back.provenance is not None and back.provenance.dirty


@pytest.mark.parametrize(
    ("patch", "fragment"),
    [
        ({"name": "Bad_Name"}, "not a valid kernel name"),
        ({"version": "1"}, "'version' must be a int"),
        ({"provenance": {"kernel-builder": {"version": "x"},
                         "kernel": {"commit": "zz", "dirty": False}}},
         "commit must be 40 or 64"),
        ({"provenance": {"kernel-builder": {"version": "x"}, "kernel": {"commit": "a" * 40}}},
         "dirty must be given"),
        ({"digest": {"algorithm": "md5", "files": {}}}, "digest must be"),
    ],
)
def test_metadata_rejects_invalid(tmp_path: Path, patch: dict[str, object], fragment: str) -> None:
    data = _meta().to_json()
    data.update(patch)
    with pytest.raises(MetadataError, match=fragment):
        Metadata.from_json(data, tmp_path / "metadata.json")


def test_metadata_ignores_unknown_keys() -> None:
    data = _meta().to_json()
    data["future-key"] = {"x": 1}
    assert Metadata.from_json(data).id == "_img2gray_cpu_abc1234"


def test_discover_variants_prefers_build_dir(tmp_path: Path) -> None:
    for name in ("torch213-cxx11-cpu-x86_64-linux", "torch-cpu"):
        d = tmp_path / "build" / name
        d.mkdir(parents=True)
        (d / "metadata.json").write_text("{}")
    (tmp_path / "build" / "not-a-variant").mkdir()
    tree = discover_variants(tmp_path)
    assert tree is not None and tree.root == tmp_path / "build"
    assert tree.names == ["torch-cpu", "torch213-cxx11-cpu-x86_64-linux"]
    assert discover_variants(tmp_path / "build" / "torch-cpu") is None


def test_atomic_write_gives_normal_permissions(tmp_path: Path) -> None:
    import os
    import stat

    from kernelkit.util.fs import atomic_write_text

    target = tmp_path / "metadata.json"
    atomic_write_text(target, "{}")
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~mask
    assert target.read_text() == "{}"
    assert [p.name for p in tmp_path.iterdir()] == ["metadata.json"]  # no temp file left


def test_discover_variants_is_the_one_variant_finder(tmp_path: Path) -> None:
    from kernelkit.artifact.layout import discover_variants

    cpu = tmp_path / "build" / "torch213-cxx11-cpu-x86_64-linux"
    cpu.mkdir(parents=True)  # named like a variant: counts without metadata.json
    other = tmp_path / "build" / "custom"
    other.mkdir()
    (other / "metadata.json").write_text("{}")  # holds metadata.json: counts
    (tmp_path / "build" / ".tmp-torch213-cxx11-cpu-x86_64-linux").mkdir()  # hidden: never
    (tmp_path / "build" / "notes").mkdir()  # neither: never
    tree = discover_variants(tmp_path)
    assert tree is not None
    assert tree.root == tmp_path / "build"
    assert tree.names == ["custom", "torch213-cxx11-cpu-x86_64-linux"]
    assert discover_variants(tmp_path / "build") == tree
    assert discover_variants(other) is None
    single = discover_variants(other, include_self=True)
    assert single is not None and single.variants == (other,)
    assert discover_variants(tmp_path / "missing") is None
