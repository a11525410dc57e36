"""``check_arch``'s decision against upstream kernels 0.19.1's own, on a table of declared
archs and device capabilities (pure functions: no GPU needed)."""

from __future__ import annotations

import itertools

import pytest

from kernelkit.loader.arch import DeviceArch, cuda_arch_supports, supports_device
from tests.upstream_run import require_upstream

ARCHS = ["7.5", "8.0", "8.6", "8.9", "9.0", "9.0a", "9.0+PTX", "8.0+PTX", "10.0f", "10.0a",
         "12.0", "12.0f+PTX", "10.3f", "sm_90", "9", "", "gfx90a", "9.x"]
CAPABILITIES = [(7, 5), (8, 0), (8, 6), (8, 9), (9, 0), (10, 0), (10, 3), (12, 0), (12, 1)]


@pytest.fixture(scope="module")
def upstream() -> object:
    require_upstream()
    from kernels._internals import archs

    return archs


def test_one_arch_matches_upstream(upstream: object) -> None:
    for arch, cap in itertools.product(ARCHS, CAPABILITIES):
        assert cuda_arch_supports(arch, cap) == upstream._cuda_arch_supports(arch, cap), (  # type: ignore[attr-defined]
            arch, cap)


@pytest.mark.parametrize("archs", [["7.5", "8.0"], ["9.0a"], ["sm_90", "x"], ["8.0+PTX"],
                                   ["10.0f", "12.0"], ["gfx", "9.0"]])
def test_a_build_matches_upstream(upstream: object, archs: list[str]) -> None:
    for cap in CAPABILITIES:
        expected = upstream._supports_cuda_capability(archs, cap)  # type: ignore[attr-defined]
        assert supports_device("cuda", tuple(archs), DeviceArch("cuda", capability=cap)) \
            == expected, (archs, cap)


def test_rocm_and_other_backends() -> None:
    gpu = DeviceArch("rocm", gfx="gfx90a")
    assert supports_device("rocm", ("gfx90a", "gfx942"), gpu)
    assert not supports_device("rocm", ("gfx942",), gpu)
    assert supports_device("rocm", None, gpu) and supports_device("rocm", (), gpu)
    # a CUDA build is never judged against a ROCm device, nor a CPU build against any
    assert supports_device("cuda", ("7.5",), gpu)
    assert supports_device("cpu", ("7.5",), DeviceArch("cuda", capability=(9, 0)))
    assert DeviceArch("cuda", capability=(9, 0)).describe() == "CUDA capability 9.0"
