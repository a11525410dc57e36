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


# --- the 0.19 grammar (kernels >= 0.19), beside the legacy one --------------------------------

NEW_NAMES = [
    # name, framework, backend, framework version, backend version, python, abi, cxx tag
    ("torch-2.13-cxx11-cpu-cpython-3.9-abi3-x86_64-linux",
     "torch", "cpu", (2, 13), None, (3, 9), "abi3", "cxx11"),
    ("torch-2.13-cpu-cpython-3.11-abi3-x86_64-linux",
     "torch", "cpu", (2, 13), None, (3, 11), "abi3", None),
    ("torch-2.14-cuda-13.0-cpython-3.9-abi3-x86_64-linux",
     "torch", "cuda", (2, 14), (13, 0), (3, 9), "abi3", None),
    ("torch-2.15-cpu-cpython-3.15-abi3t-x86_64-linux",
     "torch", "cpu", (2, 15), None, (3, 15), "abi3t", None),
    ("torch-stable-abi-2.11-cuda-12.6-cpython-3.9-abi3-x86_64-linux",
     "torch-stable-abi", "cuda", (2, 11), (12, 6), (3, 9), "abi3", None),
    ("tvm-ffi-0.1-cpu-cpython-3.9-abi3-x86_64-linux",
     "tvm-ffi", "cpu", (0, 1), None, (3, 9), "abi3", None),
    ("torch-2.12-rocm-7.14-cpython-3.9-abi3-x86_64-linux",
     "torch", "rocm", (2, 12), (7, 14), (3, 9), "abi3", None),
    ("sdk-cuda-12.8-cpython-3.12-abi3-x86_64-linux",
     "sdk", "cuda", None, (12, 8), (3, 12), "abi3", None),
    ("sdk-cpython-3.12-abi3-x86_64-linux", "sdk", "agnostic", None, None, (3, 12), "abi3", None),
    ("sdk-cuda", "sdk", "cuda", None, None, None, None, None),
    ("sdk", "sdk", "agnostic", None, None, None, None, None),
    ("mlx-metal", "mlx-noarch", "metal", None, None, None, None, None),
    ("torch-cann", "torch-noarch", "cann", None, None, None, None, None),
    ("torch-npu", "torch-noarch", "npu", None, None, None, None, None),  # the pre-0.19 name
]


@pytest.mark.parametrize("case", NEW_NAMES, ids=[c[0] for c in NEW_NAMES])
def test_parse_the_0_19_grammar(case: tuple[object, ...]) -> None:
    name, framework, backend, fv, bv, py, abi, cxx = case
    v = parse_variant(str(name))
    assert (v.framework, v.backend, v.framework_version, v.backend_version) == (
        framework, backend, fv, bv)
    assert (v.python_version, v.python_abi, v.cxx_abi) == (py, abi, cxx)


def test_legacy_names_carry_the_implicit_python() -> None:
    v = parse_variant("torch213-cxx11-cpu-x86_64-linux")
    assert (v.python_version, v.python_abi, v.legacy, v.is_arch) == ((3, 9), "abi3", True, True)
    assert parse_variant("torch213-cxx11-cpu-x86_64-linux") != parse_variant(
        "torch-2.13-cxx11-cpu-cpython-3.9-abi3-x86_64-linux")  # different names, same build


@pytest.mark.parametrize("bad", [
    "torch-2.13-cpu-x86_64-linux",  # the 0.19 grammar needs cpython-X.Y-abi
    "torch-2.13-cpu-cpython-3.12-abi3t-x86_64-linux",  # abi3t needs 3.15 or later
    "torch-2.13-cu130-cpython-3.9-abi3-x86_64-linux",  # legacy backend spelling in a new name
    "torch213-cxx11-cuda-12.6-x86_64-linux",  # and the other way round
    "torch-stable-abi-2.11-cxx11-cpu-cpython-3.9-abi3-x86_64-linux",  # no C++ ABI tag here
    "torch-2.13-cuda-cpython-3.9-abi3-x86_64-linux",  # cuda needs a version
    "sdk-foo", "sdk-universal", "mlx-universal", "torch2-cpu-x86_64-linux",
])
def test_the_0_19_grammar_rejects(bad: str) -> None:
    with pytest.raises(ValueError, match="not a kernel variant name"):
        parse_variant(bad)


def test_format_in_either_grammar_and_convert() -> None:
    from kernelkit.variants.name import (
        BUILD_NAME_GRAMMAR,
        format_tvm_ffi_variant,
        to_grammar,
    )

    assert BUILD_NAME_GRAMMAR == "legacy"  # what `kernelkit build` writes (docs/compatibility.md)
    assert format_torch_variant("2.13.0", "cpu", None, "x86_64", "linux", grammar="0.19") == \
        "torch-2.13-cxx11-cpu-cpython-3.9-abi3-x86_64-linux"
    assert format_torch_variant("2.15", "cuda", "13.0", "x86_64", "linux", grammar="0.19",
                                python=(3, 15), abi="abi3t", cxx_abi=None) == \
        "torch-2.15-cuda-13.0-cpython-3.15-abi3t-x86_64-linux"
    assert format_tvm_ffi_variant("0.1.15", "cuda", "12.8", "x86_64", "linux",
                                  grammar="0.19") == \
        "tvm-ffi-0.1-cuda-12.8-cpython-3.9-abi3-x86_64-linux"
    with pytest.raises(ValueError, match=r"legacy grammar has no cpython-3\.15-abi3t"):
        format_torch_variant("2.15", "cpu", None, "x86_64", "linux", python=(3, 15), abi="abi3t")
    for legacy in ("torch213-cxx11-cpu-x86_64-linux", "torch27-cu124-x86_64-windows",
                   "torch-stable-abi211-cu126-x86_64-linux", "tvm-ffi01-cpu-x86_64-linux",
                   "torch213-cxx98-cpu-x86_64-linux", "torch-cuda"):
        new = to_grammar(legacy, "0.19")
        assert parse_variant(new).framework == parse_variant(legacy).framework
        assert to_grammar(new, "legacy") == legacy
