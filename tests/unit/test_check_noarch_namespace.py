"""A noarch variant's ``_ops.py`` names the namespace of the torch that imports it (spec §3.5):
``kernelkit check`` accepts ``_<name>_<backend>_<id>`` for any backend there, and nothing else."""

from __future__ import annotations

from pathlib import Path

from kernelkit.artifact.metadata import Metadata
from kernelkit.check.import_rules import _ops_findings, check_namespace_expected
from kernelkit.variants.name import parse_variant
from tests.helpers import make_variant


def _meta(tmp_path: Path, variant: str) -> Metadata:
    return Metadata.read(make_variant(tmp_path, variant, name="demo", uid="ee8a328")
                         / "metadata.json")


def test_noarch_cpu_variant_imported_by_a_cuda_torch(tmp_path: Path) -> None:
    meta = _meta(tmp_path, "torch-cpu")
    data = {"ops_namespace": "_demo_cuda_ee8a328", "prefix": "_demo_cuda_ee8a328::x", "ops": {}}
    ns = check_namespace_expected(parse_variant("torch-cpu"), meta, data)
    assert ns == "_demo_cuda_ee8a328" and _ops_findings("torch-cpu", ns, data) == []


def test_noarch_variant_of_another_kernel_or_build_is_refused(tmp_path: Path) -> None:
    meta = _meta(tmp_path, "torch-cpu")
    for given in ("_other_cuda_ee8a328", "_demo_cuda_0000000", "_demo_cu_da_ee8a328"):
        data = {"ops_namespace": given, "prefix": given + "::x", "ops": {}}
        ns = check_namespace_expected(parse_variant("torch-cpu"), meta, data)
        assert ns == meta.id
        [finding] = _ops_findings("torch-cpu", ns, data)
        assert finding.code == "ops-namespace"


def test_arch_variants_must_match_their_own_id(tmp_path: Path) -> None:
    variant = "torch213-cxx11-cpu-x86_64-linux"
    meta = _meta(tmp_path, variant)
    data = {"ops_namespace": "_demo_cuda_ee8a328", "prefix": "_demo_cuda_ee8a328::x", "ops": {}}
    assert check_namespace_expected(parse_variant(variant), meta, data) == meta.id
