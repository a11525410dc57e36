"""Variant name grammar (upstream-builder.md §2.1)."""

from __future__ import annotations

import pytest

from kernelkit.variants.name import format_torch_variant, parse_variant, xy


def test_xy() -> None:
    assert xy("2.13.0") == "213"
    assert xy("13.0") == "130"
    assert xy("12.6") == "126"
    assert xy("2") == "20"
    assert xy("2.14.1+cu130") == "214"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("2.13.0", "cpu", None, "x86_64", "linux"), "torch213-cxx11-cpu-x86_64-linux"),
        (("2.14.1", "cuda", "13.0", "x86_64", "linux"), "torch214-cxx11-cu130-x86_64-linux"),
        (("2.12", "rocm", "7.1", "x86_64", "linux"), "torch212-cxx11-rocm71-x86_64-linux"),
        (("2.12", "xpu", "2025.3.2", "x86_64", "linux"), "torch212-cxx11-xpu20253-x86_64-linux"),
        (("2.12", "metal", None, "aarch64", "darwin"), "torch212-metal-aarch64-darwin"),
    ],
)
def test_format(args: tuple[str, str, str | None, str, str], expected: str) -> None:
    assert format_torch_variant(*args) == expected
    assert parse_variant(expected).name == expected


def test_format_stable_abi() -> None:
    name = format_torch_variant("2.13", "cuda", "12.6", "x86_64", "linux", stable_abi="2.11")
    assert name == "torch-stable-abi211-cu126-x86_64-linux"
    v = parse_variant(name)
    assert (v.framework, v.framework_version) == ("torch-stable-abi", (2, 11))
    assert v.backend_version == (12, 6)


def test_parse_fields() -> None:
    v = parse_variant("torch214-cxx11-cu130-x86_64-linux")
    assert (v.framework, v.framework_version) == ("torch", (2, 14))
    assert (v.backend, v.backend_version) == ("cuda", (13, 0))
    assert (v.cxx_abi, v.cpu, v.os, v.compute) == ("cxx11", "x86_64", "linux", "cu130")
    n = parse_variant("torch-universal")
    assert n.is_noarch and n.backend == "universal"
    t = parse_variant("tvm-ffi01-cu126-x86_64-linux")
    assert t.framework == "tvm-ffi" and t.framework_version == (0, 1)
    old = parse_variant("torch27-cu124-x86_64-windows")
    assert old.cxx_abi is None and old.framework_version == (2, 7)


@pytest.mark.parametrize("bad", ["", "torch", "torch213-cxx11-cpu-sparc-linux", "torch-gpu",
                                 "build", "torch213-cxx11-foo-x86_64-linux"])
def test_parse_rejects(bad: str) -> None:
    with pytest.raises(ValueError, match="not a kernel variant name"):
        parse_variant(bad)


def test_compute_tag_round_trips_through_the_one_prefix_table() -> None:
    from kernelkit.variants.name import COMPUTE_PREFIXES, compute_tag

    assert compute_tag("cuda", (13, 0)) == "cu130"
    assert compute_tag("cpu", None) == "cpu"
    assert compute_tag("metal", (1, 0)) == "metal"
    for backend in COMPUTE_PREFIXES:
        name = f"torch213-cxx11-{compute_tag(backend, (7, 1))}-x86_64-linux"
        if backend == "xpu":
            name = f"torch213-cxx11-{compute_tag(backend, (2025, 3))}-x86_64-linux"
        assert parse_variant(name).backend == backend


def test_is_variant_name() -> None:
    from kernelkit.variants.name import is_variant_name

    assert is_variant_name("torch213-cxx11-cpu-x86_64-linux")
    assert not is_variant_name("build")
