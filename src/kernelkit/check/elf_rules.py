"""Rules over one shared library's ELF facts: manylinux symbol versions, abi3, DT_NEEDED, RPATH."""

from __future__ import annotations

from kernelkit.check.elf import ElfFacts
from kernelkit.check.policy import manylinux_policy, needed_policy, stable_abi, torch_stable_abi
from kernelkit.check.report import Finding, finding


def check_elf(facts: ElfFacts, variant: str, file: str, *, python_abi: str = "3.9",
              torch_stable_abi: str | None = None) -> list[Finding]:
    """Every finding for one library (``file`` is its path inside the variant);
    ``torch_stable_abi`` ("2.11"): the library must use only torch's stable C ABI of it."""
    out = (_manylinux(facts, variant, file) + _abi3(facts, variant, file, python_abi)
           + _needed(facts, variant, file) + _rpath(facts, variant, file))
    if torch_stable_abi is not None:
        out += _torch_stable_abi(facts, variant, file, torch_stable_abi)
    if variant.startswith("tvm-ffi"):
        out += _tvm_ffi_needed(facts, variant, file)
    return out


def _tvm_ffi_needed(facts: ElfFacts, variant: str, file: str) -> list[Finding]:
    """A tvm-ffi kernel talks to frameworks through DLPack and libtvm_ffi only."""
    torch_libs = [lib for lib in facts.needed if lib.startswith(("libtorch", "libc10"))]
    out = [finding("tvm-ffi-links-torch", variant, f"DT_NEEDED {lib}: a tvm-ffi kernel must "
                   "not link libtorch", file=file) for lib in torch_libs]
    if not any(lib.startswith("libtvm_ffi") for lib in facts.needed):
        out.append(finding("tvm-ffi-no-runtime", variant, "the library does not link "
                           "libtvm_ffi.so", file=file))
    return out


def _torch_stable_abi(facts: ElfFacts, variant: str, file: str, target: str
                      ) -> list[Finding]:
    policy = torch_stable_abi()
    out = []
    for sym in facts.undefined:
        hit = policy.violation(sym.name, target)
        if hit is not None:
            out.append(finding(hit[0], variant, hit[1], file=file))
    return out


def _manylinux(facts: ElfFacts, variant: str, file: str) -> list[Finding]:
    policy = manylinux_policy()
    if facts.arch not in policy.symbol_versions:
        return [finding("manylinux", variant, f"architecture {facts.arch} has no "
                        f"{policy.name} policy", file=file,
                        fix="build for x86_64 or aarch64")]
    out = []
    for sym in facts.undefined:
        why = sym.version and policy.violation(facts.arch, sym.version)
        if why:
            out.append(finding("manylinux", variant,
                               f"{sym.name}@{sym.version} (from {sym.library}): {why}", file=file))
    return out


def _abi3(facts: ElfFacts, variant: str, file: str, python_abi: str) -> list[Finding]:
    abi = stable_abi()
    out = []
    for sym in facts.undefined:
        why = abi.violation(sym.name, python_abi)
        if why:
            out.append(finding("abi3", variant, why, file=file))
    return out


def _needed(facts: ElfFacts, variant: str, file: str) -> list[Finding]:
    policy = needed_policy()
    return [finding("needed-library", variant, f"DT_NEEDED {lib} is not an allowed dependency",
                    file=file)
            for lib in facts.needed if not policy.allows(lib)]


def _rpath(facts: ElfFacts, variant: str, file: str) -> list[Finding]:
    return [finding("rpath", variant, f"{kind} entry {entry!r} is not $ORIGIN-relative",
                    file=file)
            for kind, entries in (("RPATH", facts.rpath), ("RUNPATH", facts.runpath))
            for entry in entries
            if not (entry == "$ORIGIN" or entry.startswith(("$ORIGIN/", "${ORIGIN}")))]
