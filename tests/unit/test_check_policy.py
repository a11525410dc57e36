"""check: the data policies and the op-registration rule (pure logic)."""

from __future__ import annotations

import json

import pytest

from kernelkit.check.codes import CODES
from kernelkit.check.ops_rules import unprefixed_registrations
from kernelkit.check.policy import POLICY_DIR, manylinux_policy, needed_policy, stable_abi


def test_every_code_is_documented() -> None:
    for name, entry in CODES.items():
        assert entry.code == name
        assert entry.severity in ("error", "warning")
        assert entry.title and entry.fix


@pytest.mark.parametrize(("arch", "tag", "ok"), [
    ("x86_64", "GLIBC_2.2.5", True), ("x86_64", "GLIBC_2.28", True),
    ("x86_64", "GLIBC_2.29", False), ("x86_64", "GLIBC_2.34", False),
    ("x86_64", "GLIBC_2.19", False),  # not in the list: exact membership, not <=
    ("x86_64", "GLIBC_PRIVATE", False), ("x86_64", "GLIBCXX_3.4.24", True),
    ("x86_64", "GLIBCXX_3.4.25", False), ("x86_64", "CXXABI_1.3.11", True),
    ("x86_64", "CXXABI_1.3.12", False), ("x86_64", "CXXABI_TM_1", True),
    ("x86_64", "GCC_7.0.0", True), ("x86_64", "GCC_12.0.0", False),
    ("x86_64", "ZLIB_1.2.9", True), ("x86_64", "ZLIB_1.2.12", False),
    ("x86_64", "LIBATOMIC_1.2", True), ("aarch64", "GLIBC_2.17", True),
    ("aarch64", "GLIBC_2.2.5", False), ("x86_64", "libcudart.so.12", True),
    ("x86_64", "CUDART_12.0", True),  # untracked library
])
def test_manylinux_policy(arch: str, tag: str, ok: bool) -> None:
    why = manylinux_policy().violation(arch, tag)
    assert (why is None) == ok, why


def test_manylinux_ceilings_in_data() -> None:
    data = json.loads((POLICY_DIR / "manylinux_2_28.json").read_text())
    x86 = data["symbol_versions"]["x86_64"]
    assert x86["GLIBC"][-1] == "2.28" and x86["GLIBCXX"][-1] == "3.4.24"
    assert "1.3.11" in x86["CXXABI"] and x86["GCC"][-1] == "7.0.0"
    why = manylinux_policy().violation("x86_64", "GLIBC_2.34")
    assert why is not None and "up to 2.28" in why


@pytest.mark.parametrize(("symbol", "ok"), [
    ("PyModule_Create2", True), ("PyObject_GetAttrString", True), ("_Py_Dealloc", True),
    ("_PyObject_GC_New", True),  # abi_only, but part of the stable ABI since 3.2
    ("PyObject_GC_IsTracked", True),  # added in 3.9
    ("PyUnicode_AsUTF8AndSize", False),  # added in 3.10
    ("Py_Version", False),  # added in 3.11
    ("_PyObject_GetDictPtr", False), ("PyUnicode_AsUTF8", False),
    ("malloc", True), ("_ZN3c106detail14torchCheckFailEPKcS2_jS2_", True),
])
def test_stable_abi(symbol: str, ok: bool) -> None:
    assert (stable_abi().violation(symbol, "3.9") is None) == ok


def test_stable_abi_message_names_the_version() -> None:
    why = stable_abi().violation("PyUnicode_AsUTF8AndSize", "3.9")
    assert why is not None and "3.10" in why
    assert stable_abi().violation("PyUnicode_AsUTF8AndSize", "3.10") is None


@pytest.mark.parametrize(("lib", "ok"), [
    ("libc10.so", True), ("libc10_cuda.so", True), ("libtorch_cpu.so", True),
    ("libtorch.so", True), ("libcudart.so.13", True), ("libcublasLt.so.13", True),
    ("libc.so.6", True), ("libstdc++.so.6", True), ("libgcc_s.so.1", True),
    ("ld-linux-x86-64.so.2", True), ("libz.so.1", False), ("libpython3.11.so.1.0", False),
    ("libopencv_core.so.4.5", False),
])
def test_needed_policy(lib: str, ok: bool) -> None:
    assert needed_policy().allows(lib) == ok


REGISTRATIONS = '''
import torch
from torch.library import custom_op, register_fake
from ._ops import add_op_namespace_prefix
from . import _ops

@torch.library.custom_op(add_op_namespace_prefix("good"), mutates_args=())
def good(x): ...

@register_fake(_ops.add_op_namespace_prefix("good"))
def _(x): ...

@torch.library.register_fake("myns::bad")
def bad_fake(x): ...

@custom_op(f"{NS}::also_bad", mutates_args=())
async def also_bad(x): ...

@torch.library.register_kernel("ns::op", "cpu")
class Klass: ...

@good.register_fake
def not_checked(x): ...

def outer():
    @torch.library.register_fake("nested::ignored")
    def inner(x): ...
'''


def test_unprefixed_registrations() -> None:
    found = unprefixed_registrations(REGISTRATIONS)
    assert [(r.kind, r.name) for r in found] == [
        ("register_fake", "bad_fake"), ("custom_op", "also_bad"), ("register_kernel", "Klass")]
    assert found[0].line == 13
