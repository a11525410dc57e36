"""Variant acceptance (upstream-loader.md §2.3) and preference (§2.4): tables of systems x names."""

from __future__ import annotations

import pytest

from kernelkit.variants.choose import (
    Decision,
    best_variant,
    format_trace,
    rank_variants,
    rejection_reason,
)
from kernelkit.variants.host import InvalidBackendError, System
from kernelkit.variants.name import parse_variant


def sys_(
    backend: str = "cpu",
    bver: tuple[int, int] | None = None,
    *,
    torch=(2, 13),
    abi: bool | None = True,
    cpu: str = "x86_64",
    os: str = "linux",
    tvm=None,
    macos=None,
    free_threaded: bool = False,
) -> System:
    return System(
        torch,
        abi,
        backend,
        bver,
        cpu,
        os,
        tvm_ffi_version=tvm,
        macos_version=macos,
        free_threaded=free_threaded,
    )


CPU_LINUX = sys_()
CU128 = sys_("cuda", (12, 8))
CU129 = sys_("cuda", (12, 9))
CU125 = sys_("cuda", (12, 5))
CU130 = sys_("cuda", (13, 0), torch=(2, 14))
ROCM70 = sys_("rocm", (7, 0))
XPU = sys_("xpu", (2025, 3))
MAC26 = sys_("metal", None, abi=None, cpu="aarch64", os="darwin", macos=(26, 0))
MAC15 = sys_("metal", None, abi=None, cpu="aarch64", os="darwin", macos=(15, 7))
CPU_MAC = sys_("cpu", None, abi=None, cpu="aarch64", os="darwin", macos=(26, 1))
NOTORCH = sys_("cpu", None, torch=None, abi=None)
CANN = sys_("cann", (8, 0))

ALL_KINDS = [
    "torch213-cxx11-cu128-x86_64-linux",
    "torch213-cxx11-cu126-x86_64-linux",
    "torch213-cxx11-cu130-x86_64-linux",
    "torch213-cxx11-cpu-x86_64-linux",
    "torch213-cxx11-rocm70-x86_64-linux",
    "torch213-metal-aarch64-darwin",
    "torch213-cpu-aarch64-darwin",
    "torch-cuda",
    "torch-cpu",
    "torch-universal",
]


# --- best variant: (system, available names, expected best or None) ------------------------

BEST_CASES = [
    ("exact cuda", CU128, ALL_KINDS, "torch213-cxx11-cu128-x86_64-linux"),
    (
        "older minor ok, newest accepted preferred",
        CU129,
        ALL_KINDS,
        "torch213-cxx11-cu128-x86_64-linux",
    ),
    (
        "no newer minor",
        CU125,
        [
            "torch213-cxx11-cu126-x86_64-linux",
            "torch213-cxx11-cu128-x86_64-linux",
            "torch213-cxx11-cu130-x86_64-linux",
        ],
        None,
    ),
    ("no other major", CU130, ["torch214-cxx11-cu128-x86_64-linux"], None),
    (
        "cuda 13 exact",
        CU130,
        ["torch214-cxx11-cu128-x86_64-linux", "torch214-cxx11-cu130-x86_64-linux"],
        "torch214-cxx11-cu130-x86_64-linux",
    ),
    ("rocm exact", ROCM70, ALL_KINDS, "torch213-cxx11-rocm70-x86_64-linux"),
    # kernels 0.19: ROCm x.z loads on ROCm x.y for z <= y, as CUDA (not across majors)
    ("rocm: another major is refused", ROCM70, ["torch213-cxx11-rocm64-x86_64-linux"], None),
    ("rocm: an older minor loads", sys_("rocm", (7, 2)),
     ["torch213-cxx11-rocm70-x86_64-linux", "torch213-cxx11-rocm73-x86_64-linux"],
     "torch213-cxx11-rocm70-x86_64-linux"),
    ("cpu linux", CPU_LINUX, ALL_KINDS, "torch213-cxx11-cpu-x86_64-linux"),
    ("cpu darwin", CPU_MAC, ALL_KINDS, "torch213-cpu-aarch64-darwin"),
    ("metal on macOS 26", MAC26, ALL_KINDS, "torch213-metal-aarch64-darwin"),
    ("metal on macOS 15 falls back to universal", MAC15, ALL_KINDS, "torch-universal"),
    # spec fallback examples
    (
        "cuda aarch64 with only x86_64 arch builds -> torch-cuda",
        sys_("cuda", (12, 8), cpu="aarch64"),
        ALL_KINDS,
        "torch-cuda",
    ),
    (
        "rocm without torch-rocm -> none",
        ROCM70,
        [
            "torch213-cxx11-cu128-x86_64-linux",
            "torch213-cxx11-cpu-x86_64-linux",
            "torch213-metal-aarch64-darwin",
            "torch-cuda",
            "torch-cpu",
        ],
        None,
    ),
    ("universal is the last resort", ROCM70, ["torch-cuda", "torch-universal"], "torch-universal"),
    ("universal any backend", XPU, ["torch-universal"], "torch-universal"),
    ("specific noarch beats universal", CU128, ["torch-universal", "torch-cuda"], "torch-cuda"),
    (
        "arch beats noarch",
        CU128,
        ["torch-cuda", "torch213-cxx11-cu126-x86_64-linux"],
        "torch213-cxx11-cu126-x86_64-linux",
    ),
    ("other torch version rejected", CPU_LINUX, ["torch212-cxx11-cpu-x86_64-linux"], None),
    ("cxx98 rejected on a cxx11 torch", CPU_LINUX, ["torch213-cxx98-cpu-x86_64-linux"], None),
    ("untagged accepted", CPU_LINUX, ["torch213-cpu-x86_64-linux"], "torch213-cpu-x86_64-linux"),
    (
        "untagged preferred over tagged",
        CPU_LINUX,
        ["torch213-cxx11-cpu-x86_64-linux", "torch213-cpu-x86_64-linux"],
        "torch213-cpu-x86_64-linux",
    ),
    (
        "stable abi accepted for newer torch",
        CU130,
        ["torch-stable-abi29-cu130-x86_64-linux"],
        "torch-stable-abi29-cu130-x86_64-linux",
    ),
    (
        "stable abi newer than torch rejected",
        CPU_LINUX,
        ["torch-stable-abi214-cpu-x86_64-linux"],
        None,
    ),
    (
        "newest stable abi preferred",
        CU130,
        [
            "torch-stable-abi29-cu130-x86_64-linux",
            "torch-stable-abi211-cu130-x86_64-linux",
            "torch-stable-abi210-cu130-x86_64-linux",
        ],
        "torch-stable-abi211-cu130-x86_64-linux",
    ),
    (
        "stable abi beats torch arch",
        CU130,
        ["torch214-cxx11-cu130-x86_64-linux", "torch-stable-abi29-cu130-x86_64-linux"],
        "torch-stable-abi29-cu130-x86_64-linux",
    ),
    (
        "stable abi: newer ABI before higher CUDA minor",
        CU129,
        ["torch-stable-abi210-cu129-x86_64-linux", "torch-stable-abi211-cu126-x86_64-linux"],
        "torch-stable-abi211-cu126-x86_64-linux",
    ),
    ("stable abi without torch rejected", NOTORCH, ["torch-stable-abi29-cpu-x86_64-linux"], None),
    (
        "no torch: noarch still fits",
        NOTORCH,
        ["torch213-cxx11-cpu-x86_64-linux", "torch-cpu"],
        "torch-cpu",
    ),
    (
        "tvm-ffi matching version",
        sys_(tvm=(0, 1)),
        ["tvm-ffi01-cpu-x86_64-linux"],
        "tvm-ffi01-cpu-x86_64-linux",
    ),
    ("tvm-ffi missing", CPU_LINUX, ["tvm-ffi01-cpu-x86_64-linux"], None),
    (
        "torch arch beats tvm-ffi, tvm-ffi beats noarch",
        sys_(tvm=(0, 1)),
        ["torch-cpu", "tvm-ffi01-cpu-x86_64-linux", "torch213-cxx11-cpu-x86_64-linux"],
        "torch213-cxx11-cpu-x86_64-linux",
    ),
    (
        "tvm-ffi beats noarch (deterministic on cpu)",
        sys_(tvm=(0, 1)),
        ["torch-cpu", "tvm-ffi01-cpu-x86_64-linux"],
        "tvm-ffi01-cpu-x86_64-linux",
    ),
    # kernels 0.19 renamed CANN's noarch variant; the old name no longer matches (as upstream)
    ("cann noarch is torch-cann", CANN, ["torch-npu", "torch-cann", "torch-cuda"], "torch-cann"),
    ("torch-npu no longer matches cann", CANN, ["torch-npu", "torch-cuda"], None),
    (
        "cann arch exact",
        CANN,
        ["torch213-cxx11-cann80-x86_64-linux"],
        "torch213-cxx11-cann80-x86_64-linux",
    ),
    (
        "xpu arch exact",
        XPU,
        ["torch213-cxx11-xpu20253-x86_64-linux", "torch213-cxx11-xpu20252-x86_64-linux"],
        "torch213-cxx11-xpu20253-x86_64-linux",
    ),
    (
        "free-threaded python rejects arch builds",
        sys_(free_threaded=True),
        ["torch213-cxx11-cpu-x86_64-linux", "torch-cpu"],
        "torch-cpu",
    ),
    ("windows variant on linux rejected", CPU_LINUX, ["torch213-cpu-x86_64-windows"], None),
    ("nothing at all", CPU_LINUX, [], None),
    ("only junk", CPU_LINUX, ["README.md", "torch213"], None),
]


@pytest.mark.parametrize(
    ("system", "names", "expected"), [c[1:] for c in BEST_CASES], ids=[c[0] for c in BEST_CASES]
)
def test_best_variant(system: System, names: list[str], expected: str | None) -> None:
    decisions = rank_variants(names, system)
    assert best_variant(decisions) == expected
    # every name gets exactly one decision
    assert sorted(d.variant for d in decisions) == sorted(set(names))
    # accepted decisions come before rejected ones
    flags = [d.accepted for d in decisions]
    assert flags == sorted(flags, reverse=True)


def test_full_order_cuda_129() -> None:
    names = [
        "torch-universal",
        "torch213-cxx11-cu126-x86_64-linux",
        "torch-cuda",
        "torch213-cu126-x86_64-linux",
        "torch213-cxx11-cu128-x86_64-linux",
        "torch-stable-abi29-cu126-x86_64-linux",
        "torch213-cxx11-cu130-x86_64-linux",
    ]
    ranked = rank_variants(names, CU129)
    assert [d.variant for d in ranked if d.accepted] == [
        "torch-stable-abi29-cu126-x86_64-linux",
        "torch213-cu126-x86_64-linux",
        "torch213-cxx11-cu128-x86_64-linux",
        "torch213-cxx11-cu126-x86_64-linux",
        "torch-cuda",
        "torch-universal",
    ]
    assert ranked[0].reason == "compatible, preferred"
    assert all(d.reason == "compatible" for d in ranked[1:] if d.accepted)
    assert [d.variant for d in ranked if not d.accepted] == ["torch213-cxx11-cu130-x86_64-linux"]


# --- reasons --------------------------------------------------------------------------------

REASONS = [
    (CPU_LINUX, "torch213-cpu-aarch64-linux", "CPU (aarch64) does not match system CPU (x86_64)"),
    (CPU_LINUX, "torch213-cpu-x86_64-darwin", "OS (darwin) does not match system OS (linux)"),
    (
        CPU_LINUX,
        "torch212-cxx11-cpu-x86_64-linux",
        "Torch version (2.12) does not match environment Torch version (2.13)",
    ),
    (
        CPU_LINUX,
        "torch213-cxx98-cpu-x86_64-linux",
        "Torch C++ ABI (cxx98) does not match environment Torch C++ ABI (cxx11)",
    ),
    (
        CPU_LINUX,
        "torch-stable-abi214-cpu-x86_64-linux",
        "Torch stable ABI version (2.14) is too new for environment Torch version (2.13)",
    ),
    (
        CPU_LINUX,
        "tvm-ffi01-cpu-x86_64-linux",
        "tvm-ffi version (0.1) does not match environment tvm-ffi version (none)",
    ),
    (
        CU125,
        "torch213-cxx11-cu126-x86_64-linux",
        "CUDA version (12.6) is not compatible with system CUDA version (12.5)",
    ),
    (
        CU130,
        "torch214-cxx11-cu128-x86_64-linux",
        "CUDA version (12.8) is not compatible with system CUDA version (13.0)",
    ),
    (
        CPU_LINUX,
        "torch213-cxx11-cu128-x86_64-linux",
        "backend (cu128) does not match selected backend (cpu)",
    ),
    (
        ROCM70,
        "torch213-cxx11-rocm64-x86_64-linux",
        "ROCm version (6.4) is not compatible with system ROCm version (7.0)",
    ),
    (
        MAC15,
        "torch213-metal-aarch64-darwin",
        "Metal kernels require macOS 26.0 or later, system macOS version is 15.7",
    ),
    (
        sys_("metal", None, abi=None, cpu="aarch64", os="darwin"),
        "torch213-metal-aarch64-darwin",
        "Metal kernels require macOS 26.0 or later, system macOS version is none",
    ),
    (
        CU128,
        "torch-rocm",
        "backend (rocm) does not match system backend (cuda) and is not universal",
    ),
    (CANN, "torch-cuda",
     "backend (cuda) does not match system backend (cann) and is not universal"),
    (
        sys_(free_threaded=True),
        "torch213-cxx11-cpu-x86_64-linux",
        "abi3 is not supported on free-threaded Python, abi3t is required",
    ),
]


@pytest.mark.parametrize(
    ("system", "name", "reason"), REASONS, ids=[r[1] + "@" + r[0].compute_tag for r in REASONS]
)
def test_rejection_reason(system: System, name: str, reason: str) -> None:
    assert rejection_reason(parse_variant(name), system) == reason
    [decision] = rank_variants([name], system)
    assert decision == Decision(name, False, reason)


def test_unparsable_names_are_rejected_last_with_reason() -> None:
    ranked = rank_variants(["garbage", "torch-cpu", "torch213-cxx11-cu128-x86_64-linux"], CPU_LINUX)
    assert [d.variant for d in ranked] == [
        "torch-cpu",
        "torch213-cxx11-cu128-x86_64-linux",
        "garbage",
    ]
    assert not ranked[-1].accepted
    assert ranked[-1].reason.startswith("not a build variant name")


def test_duplicates_give_one_decision() -> None:
    assert len(rank_variants(["torch-cpu", "torch-cpu"], CPU_LINUX)) == 1


def test_backend_override_cpu_on_cuda_system() -> None:
    ranked = rank_variants(ALL_KINDS, CU128, backend="cpu")
    assert best_variant(ranked) == "torch213-cxx11-cpu-x86_64-linux"
    assert "torch213-cxx11-cu128-x86_64-linux" not in [d.variant for d in ranked if d.accepted]


def test_backend_override_invalid() -> None:
    with pytest.raises(
        InvalidBackendError, match="Invalid backend 'xpu', system supported backends: cpu, cuda"
    ):
        rank_variants(ALL_KINDS, CU128, backend="xpu")
    with pytest.raises(
        ValueError, match="Invalid backend 'cuda', system supported backends: cpu\n"
    ):
        rank_variants(ALL_KINDS, CPU_LINUX, backend="cuda")


def test_order_is_independent_of_input_order() -> None:
    a = rank_variants(ALL_KINDS, CU129)
    b = rank_variants(list(reversed(ALL_KINDS)), CU129)
    assert a == b


def test_format_trace() -> None:
    text = format_trace(rank_variants(["torch-cpu", "torch-universal", "torch-cuda"], CPU_LINUX))
    assert text.splitlines() == [
        "torch-cpu compatible, preferred \u2705",
        "torch-universal compatible \u2705",
        "torch-cuda: backend (cuda) does not match system backend (cpu) and is not universal",
    ]


@pytest.mark.parametrize(("torch", "ok"), [
    ((2, 10), False), ((2, 11), True), ((2, 12), True), ((2, 13), True), ((3, 0), True),
])
def test_stable_abi_build_serves_its_version_and_every_newer_torch(
        torch: tuple[int, int], ok: bool) -> None:
    """A torch-stable-abi211 build serves torch 2.11, 2.12, ... (upstream §2.3)."""
    name = "torch-stable-abi211-cpu-x86_64-linux"
    why = rejection_reason(parse_variant(name), sys_(torch=torch))
    assert (why is None) == ok, why
    if not ok:
        assert why == ("Torch stable ABI version (2.11) is too new for environment Torch "
                       "version (2.10)")


def test_full_order_all_frameworks_cuda_130() -> None:
    """Upstream's _sort_variants: stable ABI (newest ABI, then newest CUDA minor) > torch arch
    (tagless before cxx11) > tvm-ffi > backend noarch > universal; rejected last."""
    system = sys_("cuda", (13, 2), torch=(2, 13), tvm=(0, 1))
    names = [
        "torch-universal", "torch-cuda", "tvm-ffi01-cu130-x86_64-linux",
        "torch213-cxx11-cu130-x86_64-linux", "torch213-cu132-x86_64-linux",
        "torch-stable-abi211-cu130-x86_64-linux", "torch-stable-abi212-cu130-x86_64-linux",
        "torch-stable-abi211-cu132-x86_64-linux", "torch-stable-abi214-cu130-x86_64-linux",
        "torch212-cxx11-cu130-x86_64-linux", "tvm-ffi02-cu130-x86_64-linux",
    ]
    ranked = rank_variants(names, system)
    assert [d.variant for d in ranked if d.accepted] == [
        "torch-stable-abi212-cu130-x86_64-linux",
        "torch-stable-abi211-cu132-x86_64-linux",
        "torch-stable-abi211-cu130-x86_64-linux",
        "torch213-cu132-x86_64-linux",
        "torch213-cxx11-cu130-x86_64-linux",
        "tvm-ffi01-cu130-x86_64-linux",
        "torch-cuda",
        "torch-universal",
    ]
    rejected = {d.variant: d.reason for d in ranked if not d.accepted}
    assert set(rejected) == {"torch-stable-abi214-cu130-x86_64-linux",
                             "torch212-cxx11-cu130-x86_64-linux", "tvm-ffi02-cu130-x86_64-linux"}
    assert "tvm-ffi version (0.2)" in rejected["tvm-ffi02-cu130-x86_64-linux"]
