"""check: the tvm-ffi rules (links libtvm_ffi, not libtorch; import probe verdicts)."""

from __future__ import annotations

from pathlib import Path

from kernelkit.check.elf import ElfFacts
from kernelkit.check.elf_rules import check_elf
from kernelkit.check.import_rules import TorchEnv, _tvm_ffi_findings, mismatch
from kernelkit.variants.name import parse_variant

TVM = "tvm-ffi01-cpu-x86_64-linux"
NS = "_relu_tvm_ffi_cpu_abc1234"


def _facts(*needed: str) -> ElfFacts:
    return ElfFacts(Path(f"{NS}.so"), "x86_64", needed, (), (), ())


def test_tvm_ffi_variant_links_libtvm_ffi_not_torch() -> None:
    ok = check_elf(_facts("libtvm_ffi.so", "libstdc++.so.6", "libc.so.6"), TVM, f"{NS}.so")
    assert ok == []
    bad = check_elf(_facts("libtorch_cpu.so", "libc10.so", "libc.so.6"), TVM, f"{NS}.so")
    assert sorted(f.code for f in bad) == ["tvm-ffi-links-torch", "tvm-ffi-links-torch",
                                           "tvm-ffi-no-runtime"]
    # a torch variant may not depend on libtvm_ffi either way: only the tvm-ffi rules differ
    torch_variant = check_elf(_facts("libtorch_cpu.so", "libc.so.6"),
                              "torch213-cxx11-cpu-x86_64-linux", "x.abi3.so")
    assert torch_variant == []


def test_import_needs_matching_tvm_ffi() -> None:
    variant = parse_variant(TVM)
    env = TorchEnv(Path("/py"), (2, 13), None, None, tvm_ffi=(0, 1))
    assert mismatch(variant, env) is None
    why = mismatch(variant, TorchEnv(Path("/py"), (2, 13), None, None, tvm_ffi=(0, 2)))
    assert why == "the variant needs apache-tvm-ffi 0.1 (it has 0.2)"
    assert "it has none" in str(mismatch(variant, TorchEnv(Path("/py"), (2, 13), None, None)))


def test_tvm_ffi_import_verdict() -> None:
    good = {"prefix": f"{NS}::x", "ops_type": "tvm_ffi.module.Module"}
    assert _tvm_ffi_findings(TVM, NS, good) == []
    [wrong] = _tvm_ffi_findings(TVM, NS, {"prefix": "_other::x", "ops_type": "builtins.NoneType"})
    assert wrong.code == "ops-namespace" and "_other::x" in wrong.message
    assert "tvm_ffi.load_module" in wrong.fix
