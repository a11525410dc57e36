"""check: the torch stable-ABI policy (data from torch's C shim headers) and its ELF rule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kernelkit.check.elf import ElfFacts, UndefinedSymbol
from kernelkit.check.elf_rules import check_elf
from kernelkit.check.policy import POLICY_DIR, torch_stable_abi


def test_policy_data_groups_newer_shims_by_torch_version() -> None:
    data = json.loads((POLICY_DIR / "torch_stable_abi.json").read_text())
    assert data["stable-prefixes"] == ["aoti_torch_", "torch_"]
    added = data["added"]
    assert {"2.10", "2.11", "2.12"} <= set(added)
    # torch_from_blob was added to the stable C shim in 2.11 (torch/csrc/stable/c/shim.h).
    assert "torch_from_blob" in added["2.11"]
    # a symbol is listed once, under the version that added it
    names = [n for syms in added.values() for n in syms]
    assert len(names) == len(set(names))


@pytest.mark.parametrize(("symbol", "target", "code"), [
    ("aoti_torch_get_numel", "2.11", None),  # baseline shim, always allowed
    ("torch_library_impl", "2.10", None),
    ("torch_from_blob", "2.11", None),  # added in 2.11: fine for a 2.11 build
    ("torch_from_blob", "2.10", "torch-stable-abi-version"),  # ... but not for 2.10
    ("torch_from_blob", "2.12", None),
    ("_ZN3c106detail14torchCheckFailEPKcS2_jS2_", "2.11", "torch-stable-abi"),  # c10::
    ("_ZNK2at10TensorBase5numelEv", "2.11", "torch-stable-abi"),  # at::TensorBase const
    ("_ZN5torch8autograd12VariableInfoC1Ev", "2.11", "torch-stable-abi"),  # torch::autograd
    ("_ZTIN3c1011StorageImplE", "2.11", "torch-stable-abi"),  # typeinfo for c10::
    ("_ZN5torch6stable6detail3fooEv", "2.11", None),  # torch::stable:: is the stable API
    ("_ZN5torch10headeronly3fooEv", "2.11", None),
    ("_ZNSt6vectorIiSaIiEE9push_backEv", "2.11", None),  # libstdc++: not torch's business
    ("PyModule_Create2", "2.11", None), ("memcpy", "2.11", None),
])
def test_torch_stable_abi_policy(symbol: str, target: str, code: str | None) -> None:
    hit = torch_stable_abi().violation(symbol, target)
    assert (hit[0] if hit else None) == code, hit


def _facts(*symbols: str) -> ElfFacts:
    return ElfFacts(Path("x.abi3.so"), "x86_64", ("libtorch_cpu.so", "libc.so.6"), (), (),
                    tuple(UndefinedSymbol(s, None, None) for s in symbols))


def test_elf_rule_only_for_stable_abi_variants() -> None:
    facts = _facts("aoti_torch_get_numel", "_ZN3c106detail14torchCheckFailEPKcS2_jS2_",
                   "torch_from_blob")
    full = check_elf(facts, "torch213-cxx11-cpu-x86_64-linux", "x.abi3.so")
    assert not [f for f in full if f.code.startswith("torch-stable-abi")]
    found = check_elf(facts, "torch-stable-abi210-cpu-x86_64-linux", "x.abi3.so",
                      torch_stable_abi="2.10")
    codes = sorted(f.code for f in found)
    assert codes == ["torch-stable-abi", "torch-stable-abi-version"]
    cxx = next(f for f in found if f.code == "torch-stable-abi")
    assert "torchCheckFail" in cxx.message and cxx.severity == "error"
    assert "torch/csrc/stable" in cxx.fix
    newer = next(f for f in found if f.code == "torch-stable-abi-version")
    assert "torch 2.11" in newer.message and "2.10" in newer.message
