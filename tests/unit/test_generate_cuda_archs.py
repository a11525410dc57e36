"""CUDA capability defaults, loose intersection, nvcc flags and metadata archs (spec §2.5)."""

from __future__ import annotations

import pytest

from kernelkit.generate import cuda_archs as ca
from kernelkit.variants.matrix import default_cuda_capabilities


def test_defaults_per_toolkit() -> None:
    assert ca.default_capabilities("13.0") == [
        "7.5", "8.0", "8.6", "8.7", "8.9", "9.0", "10.0", "11.0", "12.0", "12.1+PTX"]
    assert ca.default_capabilities("12.9")[-1] == "12.0+PTX"
    assert ca.default_capabilities("12.6") == [
        "7.0", "7.2", "7.5", "8.0", "8.6", "8.7", "8.9", "9.0+PTX"]


@pytest.mark.parametrize("toolkit", ["12.6", "12.8", "12.9", "13.0", "13.2"])
def test_defaults_agree_with_the_variant_matrix(toolkit: str) -> None:
    # cuda_archs.py is copied standalone into generated trees; it must match the matrix data.
    assert ca.default_capabilities(toolkit) == default_cuda_capabilities(toolkit)


def test_spec_example_relu_archs_subset() -> None:
    targets = ca.default_capabilities("12.6")
    assert ca.loose_intersection(["5.0", "7.5", "8.0", "9.0"], targets) == ["7.5", "8.0", "9.0"]


def test_highest_source_of_the_same_major() -> None:
    assert ca.loose_intersection(["8.0"], ["8.0", "8.6", "8.9", "9.0"]) == ["8.0"]
    assert ca.loose_intersection(["8.0", "8.6"], ["8.0", "8.6", "8.9"]) == ["8.0", "8.6"]
    assert ca.loose_intersection(["99999.0"], ca.default_capabilities("13.0")) == []


def test_ptx_is_reapplied_and_matches_across_majors() -> None:
    assert ca.loose_intersection(["8.0+PTX"], ["8.0", "9.0"]) == ["8.0+PTX"]
    assert ca.loose_intersection(["8.0+PTX"], ["9.0", "10.0"]) == ["8.0+PTX"]
    assert ca.loose_intersection(["7.5", "8.0"], ["9.0"]) == []


def test_arch_specific_suffixes_replace_their_base() -> None:
    targets = ["8.0", "9.0", "10.0"]
    assert ca.loose_intersection(["8.0", "9.0a", "10.0f"], targets) == ["8.0", "9.0a", "10.0f"]
    assert ca.loose_intersection(["9.0a"], ["8.0"]) == []  # base not a target: dropped


def test_components_without_capabilities_take_the_targets() -> None:
    assert ca.component_capabilities(None, ["9.0"]) == ["9.0"]
    assert ca.component_capabilities([], ["12.1+PTX"]) == ["12.1+PTX"]
    assert ca.component_capabilities(["9.0", "10.0"], ["9.0"]) == ["9.0"]


def test_gencode_flags() -> None:
    assert ca.gencode_flags(["9.0", "9.0a", "12.1+PTX"]) == [
        "-gencode=arch=compute_90,code=sm_90",
        "-gencode=arch=compute_90a,code=sm_90a",
        "-gencode=arch=compute_121,code=[sm_121,compute_121]",
    ]


def test_metadata_archs_are_a_plain_string_sort() -> None:
    assert ca.metadata_archs([["8.0", "9.0+PTX"], ["10.0", "8.0"]]) == ["10.0", "8.0", "9.0+PTX"]


def test_parse_capabilities() -> None:
    assert ca.parse_capabilities("9.0") == ["9.0"]
    assert ca.parse_capabilities("8.0, 9.0+PTX;10.0a") == ["8.0", "9.0+PTX", "10.0a"]
    for bad in ("", "sm_90", "9", "9.0+ptx"):
        with pytest.raises(ValueError, match="invalid CUDA capabilities"):
            ca.parse_capabilities(bad)
