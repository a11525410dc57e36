"""Host detection: the real machine, and the backend override rules (upstream §2.1)."""

from __future__ import annotations

import platform

import pytest

from kernelkit.variants.host import InvalidBackendError, System, detect_system, select_backend


def test_detect_matches_this_machine() -> None:
    torch = pytest.importorskip("torch")
    s = detect_system()
    major, minor = (int(x) for x in torch.__version__.split("+")[0].split(".")[:2])
    assert s.torch_version == (major, minor)
    assert s.os == platform.system().lower()
    assert s.cpu in ("x86_64", "aarch64")
    if torch.version.cuda:
        assert s.backend == "cuda"
        assert s.compute_tag == "cu" + "".join(torch.version.cuda.split(".")[:2])
    else:
        assert s.backend == "cpu" and s.backend_version is None
    if s.os == "linux":
        assert s.cxx11_abi == bool(torch.compiled_with_cxx11_abi())


def test_detect_backend_override() -> None:
    s = detect_system()
    assert detect_system("cpu").backend == "cpu"
    assert detect_system("cpu").backend_version is None
    assert detect_system(s.backend) == s
    with pytest.raises(InvalidBackendError, match="Invalid backend 'xpu'"):
        detect_system("xpu")


@pytest.mark.parametrize(
    ("backend", "ok"), [("cpu", True), ("cuda", True), ("rocm", False), ("metal", False)]
)
def test_select_backend_on_cuda(backend: str, ok: bool) -> None:
    cuda = System((2, 13), True, "cuda", (12, 8), "x86_64", "linux")
    if ok:
        assert select_backend(cuda, backend).backend == backend
    else:
        with pytest.raises(InvalidBackendError) as info:
            select_backend(cuda, backend)
        assert info.value.supported == ["cpu", "cuda"]
        assert f"Invalid backend '{backend}', system supported backends: cpu, cuda" in str(
            info.value
        )


def test_describe_and_compute_tag() -> None:
    s = System((2, 14), True, "cuda", (13, 0), "x86_64", "linux")
    assert s.compute_tag == "cu130"
    assert s.describe() == "torch 2.14 (cxx11 ABI), backend cuda 13.0, x86_64-linux"
    assert System(
        None, None, "cpu", None, "aarch64", "darwin", macos_version=(26, 1)
    ).describe() == ("no torch, backend cpu, aarch64-darwin, macOS 26.1")
    assert System((2, 13), True, "xpu", (2025, 3), "x86_64", "linux").compute_tag == "xpu20253"


def test_arch_variant_name() -> None:
    assert System((2, 14), True, "cuda", (13, 0), "x86_64", "linux").arch_variant() == (
        "torch214-cxx11-cu130-x86_64-linux"
    )
    assert System((2, 13), None, "metal", None, "aarch64", "darwin").arch_variant() == (
        "torch213-metal-aarch64-darwin"
    )
    assert System(None, None, "cpu", None, "x86_64", "linux").arch_variant() is None


@pytest.mark.parametrize(("machine", "system", "expected"), [
    ("AMD64", "Windows", ("x86_64", "windows")),
    ("arm64", "Darwin", ("aarch64", "darwin")),
    ("x86_64", "Linux", ("x86_64", "linux")),
    ("aarch64", "Linux", ("aarch64", "linux")),
])
def test_normalize_platform(machine: str, system: str, expected: tuple[str, str]) -> None:
    from kernelkit.variants.host import normalize_platform

    assert normalize_platform(machine, system) == expected


def test_host_platform_matches_the_detected_system() -> None:
    from kernelkit.variants.host import detect_system, host_platform

    s = detect_system()
    assert host_platform() == f"{s.cpu}-{s.os}"
