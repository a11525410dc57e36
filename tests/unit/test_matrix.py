"""The supported matrix (data) and the variants a manifest builds from it (upstream §2.2-§2.5)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelkit.artifact.layout import discover_variants
from kernelkit.manifest.model import (
    BackendGeneral,
    General,
    KernelComponent,
    Manifest,
    TorchFramework,
    TorchNoarch,
    TvmFfi,
    Version,
)
from kernelkit.variants.matrix import (
    default_cuda_capabilities,
    load_matrix,
    matrix_compliance,
    required_variants,
    targets_for,
)
from tests.helpers import make_variant

V = Version.parse


def manifest(backends: tuple[str, ...] = ("cpu", "cuda"), *, framework: object = None,
             kernels: tuple[str, ...] | None = None, cuda: BackendGeneral | None = None,
             path: Path | None = None) -> Manifest:
    kernels = backends if kernels is None else kernels
    comps = tuple(KernelComponent(f"k_{b}", b, (f"{b}/k.cpp",), ("torch",)) for b in kernels)
    fw = framework if framework is not None else TorchFramework(src=("torch-ext/b.cpp",))
    return Manifest(General("demo", 1, "MIT", backends, cuda=cuda), fw, comps,  # type: ignore[arg-type]
                    path=path)


def names(m: Manifest, system: str = "x86_64-linux") -> list[str]:
    return [t.variant for t in targets_for(m, system=system)]


def test_required_variants_match_upstream_table() -> None:
    req = required_variants()
    assert req[("cpu", "x86_64-linux")] == ["torch212-cxx11-cpu-x86_64-linux",
                                            "torch213-cxx11-cpu-x86_64-linux"]
    assert req[("cuda", "x86_64-linux")] == [
        f"torch21{t}-cxx11-cu{c}-x86_64-linux" for t in (2, 3) for c in (126, 130, 132)]
    assert req[("rocm", "x86_64-linux")] == [
        f"torch21{t}-cxx11-rocm{r}-x86_64-linux" for t in (2, 3) for r in (71, 72)]
    assert req[("xpu", "x86_64-linux")] == ["torch212-cxx11-xpu20253-x86_64-linux",
                                            "torch213-cxx11-xpu20260-x86_64-linux"]
    assert req[("metal", "aarch64-darwin")] == ["torch212-metal-aarch64-darwin",
                                                "torch213-metal-aarch64-darwin"]
    assert req[("cpu", "aarch64-darwin")] == ["torch212-cpu-aarch64-darwin",
                                              "torch213-cpu-aarch64-darwin"]
    assert len(req[("cuda", "aarch64-linux")]) == 6
    assert len(req) == 8  # no tpu, no non-bundle (2.11, 2.14) configs


def test_local_configs_and_pins() -> None:
    by_name = {t.variant: t for t in targets_for(manifest())}
    cpu = by_name["torch213-cxx11-cpu-x86_64-linux"]
    assert cpu.pin is not None and cpu.pin.requirement == "torch==2.13.0+cpu"
    assert cpu.pin.index_url == "https://download.pytorch.org/whl/cpu" and cpu.required
    cu = by_name["torch214-cxx11-cu130-x86_64-linux"]
    assert cu.pin is not None and cu.pin.requirement == "torch==2.14.1" and not cu.required
    assert by_name["torch212-cxx11-cu126-x86_64-linux"].pin.index_url.endswith("/cu126")  # type: ignore[union-attr]
    assert "torch211-cxx11-cu130-x86_64-linux" in by_name
    darwin = {t.variant: t for t in targets_for(manifest(("cpu",)), system="aarch64-darwin")}
    assert darwin["torch213-cpu-aarch64-darwin"].pin.index_url is None  # type: ignore[union-attr]


@pytest.mark.parametrize(("toolkit", "first", "last"), [
    ("13.0", "7.5", "12.1+PTX"), ("13.2", "7.5", "12.1+PTX"), ("12.8", "7.0", "12.0+PTX"),
    ("12.9", "7.0", "12.0+PTX"), ("12.6", "7.0", "9.0+PTX"), ("11.8", "7.0", "9.0+PTX"),
])
def test_default_cuda_capabilities(toolkit: str, first: str, last: str) -> None:
    caps = default_cuda_capabilities(toolkit)
    assert caps[0] == first and caps[-1] == last


def test_backends_filter() -> None:
    got = names(manifest(("cpu",)))
    assert got == ["torch211-cxx11-cpu-x86_64-linux", "torch212-cxx11-cpu-x86_64-linux",
                   "torch213-cxx11-cpu-x86_64-linux"]
    assert all("-cu" in n for n in names(manifest(("cuda",))))
    assert names(manifest(("metal",))) == []  # no metal config on x86_64-linux
    assert names(manifest(("metal",)), "aarch64-darwin") == ["torch212-metal-aarch64-darwin",
                                                             "torch213-metal-aarch64-darwin"]


def test_torch_bounds_are_inclusive() -> None:
    m = manifest(("cpu", "cuda"), framework=TorchFramework(minver=V("2.12"), maxver=V("2.13")))
    got = names(m)
    assert not any(n.startswith(("torch211", "torch214")) for n in got)
    assert "torch212-cxx11-cpu-x86_64-linux" in got and "torch213-cxx11-cu132-x86_64-linux" in got
    only = manifest(("cpu",), framework=TorchFramework(minver=V("2.13"), maxver=V("2.13")))
    assert names(only) == ["torch213-cxx11-cpu-x86_64-linux"]


def test_cuda_bounds() -> None:
    m = manifest(("cuda",), cuda=BackendGeneral(minver=V("13.0"), maxver=V("13.0")))
    assert names(m) == ["torch211-cxx11-cu130-x86_64-linux", "torch212-cxx11-cu130-x86_64-linux",
                        "torch213-cxx11-cu130-x86_64-linux", "torch214-cxx11-cu130-x86_64-linux"]
    old = manifest(("cuda",), cuda=BackendGeneral(maxver=V("12.8")))
    assert {n.split("-")[2] for n in names(old)} == {"cu126"}


def test_noarch_names_collapse() -> None:
    m = manifest(("cpu", "cuda"), framework=TorchNoarch(), kernels=())
    targets = targets_for(m)
    assert [t.variant for t in targets] == ["torch-cpu", "torch-cuda"]
    assert all(t.kind == "noarch" and t.required for t in targets)
    # Built from a bundle config, newest torch first.
    assert targets[0].torch == "2.13"
    # A torch kernel without a compiled component for a backend is noarch for that backend.
    mixed = names(manifest(("cpu", "cuda"), kernels=("cpu",)))
    assert "torch-cuda" in mixed and "torch213-cxx11-cpu-x86_64-linux" in mixed


def test_stable_abi_keeps_newest_torch_per_backend_version() -> None:
    m = manifest(("cpu", "cuda"), framework=TorchFramework(stable_abi={"cuda": V("2.11")}))
    got = names(m)
    stable = [n for n in got if n.startswith("torch-stable-abi")]
    assert sorted(stable) == ["torch-stable-abi211-cu126-x86_64-linux",
                              "torch-stable-abi211-cu130-x86_64-linux",
                              "torch-stable-abi211-cu132-x86_64-linux"]
    by_name = {t.variant: t for t in targets_for(m)}
    assert by_name["torch-stable-abi211-cu130-x86_64-linux"].torch == "2.14"
    assert not by_name["torch-stable-abi211-cu130-x86_64-linux"].required
    assert "torch213-cxx11-cpu-x86_64-linux" in got  # cpu keeps the normal ABI


def test_tvm_ffi_only_configs_with_tvm_ffi() -> None:
    m = manifest(("cpu", "cuda"), framework=TvmFfi(src=("b.cpp",)))
    assert names(m) == ["tvm-ffi01-cpu-x86_64-linux", "tvm-ffi01-cu126-x86_64-linux",
                        "tvm-ffi01-cu130-x86_64-linux", "tvm-ffi01-cu132-x86_64-linux"]


def _names(path: Path) -> list[str]:
    tree = discover_variants(path)
    return tree.names if tree else []


def test_matrix_compliance(tmp_path: Path) -> None:
    m = manifest(("cpu", "cuda"), framework=TorchFramework(maxver=V("2.12")))
    build = tmp_path / "build"
    make_variant(build, "torch212-cxx11-cpu-x86_64-linux")
    report = {(c.backend, c.system): c for c in matrix_compliance(_names(tmp_path), m,
                                                                  systems=["x86_64-linux"])}
    assert set(report) == {("cpu", "x86_64-linux"), ("cuda", "x86_64-linux")}
    cpu = report[("cpu", "x86_64-linux")]
    assert cpu.missing == ("torch213-cxx11-cpu-x86_64-linux",) and not cpu.compliant
    assert cpu.excluded_by_manifest == ("torch213-cxx11-cpu-x86_64-linux",)  # maxver 2.12
    # the required variant under its kernels 0.19 name counts too
    make_variant(build, "torch-2.13-cxx11-cpu-cpython-3.9-abi3-x86_64-linux")
    again = {c.backend: c for c in matrix_compliance(_names(build), m, systems=["x86_64-linux"])}
    assert again["cpu"].compliant and len(again["cuda"].missing) == 6


def test_matrix_compliance_noarch(tmp_path: Path) -> None:
    m = manifest(("cpu", "cuda"), framework=TorchNoarch(), kernels=())
    make_variant(tmp_path / "build", "torch-cpu")
    report = {c.backend: c
              for c in matrix_compliance(_names(tmp_path), m, systems=["x86_64-linux"])}
    assert report["cpu"].compliant and report["cuda"].missing == ("torch-cuda",)


def test_matrix_json_is_consistent() -> None:
    matrix = load_matrix()
    for e in matrix.entries:
        assert set(e.systems) <= set(matrix.systems)
        assert (e.backend_version is not None) == (e.backend in ("cuda", "rocm", "xpu"))
        if e.backend == "cuda":
            assert matrix.toolkit_wheels_for(e.backend_version or "") is not None
        assert e.torch_pin.startswith(e.torch + ".")
