"""Which build variant fits this machine (upstream-loader.md §2.3 acceptance, §2.4 preference).

Pure functions of variant names and a :class:`~kernelkit.variants.host.System`: every name gets
exactly one :class:`Decision` with a human-readable reason, accepted ones first, best first.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kernelkit.variants.host import System, select_backend
from kernelkit.variants.name import Variant, parse_variant

#: Metal arch builds use ``-std=metal4.0``, which needs macOS 26 or later.
METAL_MIN_MACOS = (26, 0)


@dataclass(frozen=True)
class Decision:
    """Whether ``variant`` fits this machine, and why (or why not)."""

    variant: str
    accepted: bool
    reason: str


def rank_variants(names: Iterable[str], system: System,
                  backend: str | None = None) -> list[Decision]:
    """One decision per name: accepted first, in preference order; then rejected ones.

    ``backend`` (``"cpu"`` or the system's backend) overrides ``system.backend`` as
    :func:`~kernelkit.variants.host.detect_system` does. Unparsable names are rejected.
    """
    system = select_backend(system, backend)
    scored: list[tuple[tuple[object, ...], Decision]] = []
    for name in dict.fromkeys(names):  # de-duplicate, keep order
        try:
            variant = parse_variant(name)
        except ValueError as exc:
            scored.append(((2, name), Decision(name, False, f"not a build variant name ({exc})")))
            continue
        reason = rejection_reason(variant, system)
        decision = Decision(name, reason is None, reason or "compatible")
        scored.append(((0 if reason is None else 1, *_preference(variant), name), decision))
    ranked = [d for _, d in sorted(scored, key=lambda t: t[0])]
    if ranked and ranked[0].accepted:
        ranked[0] = Decision(ranked[0].variant, True, "compatible, preferred")
    return ranked


def best_variant(decisions: list[Decision]) -> str | None:
    """The preferred accepted variant of a ranked list, or ``None``."""
    return decisions[0].variant if decisions and decisions[0].accepted else None


def rejection_reason(v: Variant, system: System) -> str | None:
    """Why ``v`` does not fit ``system``; ``None`` when it fits (kernels 0.19.1's checks, in
    its order)."""
    if v.is_noarch:
        return _noarch_reason(v, system)
    if v.is_sdk:
        return _sdk_reason(v, system)
    return (_python_reason(v, system) or _system_reason(v, system)
            or _framework_reason(v, system) or _backend_reason(v, system))


def _noarch_reason(v: Variant, system: System) -> str | None:
    if v.framework == "mlx-noarch" and not system.has_mlx:
        return "MLX is not installed in the environment"
    if v.backend in (system.backend, "universal"):
        return None
    old = " (torch-npu is the name kernels < 0.19 used for torch-cann)" \
        if v.backend == "npu" and system.backend == "cann" else ""
    return (f"backend ({v.backend}) does not match system backend ({system.backend}) and is "
            f"not universal{old}")


def _sdk_reason(v: Variant, system: System) -> str | None:
    reason = _python_reason(v, system) if v.python_version is not None else None
    if reason is None and v.cpu is not None:
        reason = _system_reason(v, system)
    if reason is not None or v.backend == "agnostic":
        return reason
    if v.cpu is None:  # sdk-<backend>: the backend's name only
        return None if v.backend == system.backend else (
            f"backend ({v.backend}) does not match system backend ({system.backend})")
    return _backend_reason(v, system)


def _python_reason(v: Variant, system: System) -> str | None:
    if v.python_abi == "abi3" and system.free_threaded:
        return "abi3 is not supported on free-threaded Python, abi3t is required"
    if v.python_version is not None and system.python_version < v.python_version:
        return (f"Python {_v(v.python_version)} or later is required, system Python version "
                f"is {_v(system.python_version)}")
    return None


def _system_reason(v: Variant, system: System) -> str | None:
    if v.cpu != system.cpu:
        return f"CPU ({v.cpu}) does not match system CPU ({system.cpu})"
    if v.os != system.os:
        return f"OS ({v.os}) does not match system OS ({system.os})"
    return None


def _framework_reason(v: Variant, system: System) -> str | None:
    fv = v.framework_version
    if v.framework == "torch":
        if fv != system.torch_version:
            return (f"Torch version ({_v(fv)}) does not match environment Torch version "
                    f"({_v(system.torch_version)})")
        if v.cxx_abi is not None and (v.cxx_abi == "cxx11") != system.cxx11_abi:
            return (f"Torch C++ ABI ({v.cxx_abi}) does not match environment Torch C++ ABI "
                    f"({_abi(system.cxx11_abi)})")
    elif v.framework == "torch-stable-abi":
        if system.torch_version is None or (fv is not None and fv > system.torch_version):
            return (f"Torch stable ABI version ({_v(fv)}) is too new for environment Torch "
                    f"version ({_v(system.torch_version)})")
    elif v.framework == "tvm-ffi" and fv != system.tvm_ffi_version:
        return (f"tvm-ffi version ({_v(fv)}) does not match environment tvm-ffi version "
                f"({_v(system.tvm_ffi_version)})")
    return None


#: Backends whose variants built for an older minor version load on a newer one (x.z, z <= y).
MINOR_COMPATIBLE = ("cuda", "rocm")


def _backend_reason(v: Variant, system: System) -> str | None:
    if v.backend == system.backend and v.backend in MINOR_COMPATIBLE:
        vv, sv = v.backend_version, system.backend_version
        if vv is None or sv is None or vv[0] != sv[0] or vv[1] > sv[1]:
            name = "CUDA" if v.backend == "cuda" else "ROCm"
            return (f"{name} version ({_v(vv)}) is not compatible with system {name} version "
                    f"({_v(sv)})")
        return None
    if v.compute != system.compute_tag:
        return f"backend ({v.compute}) does not match selected backend ({system.compute_tag})"
    if v.backend == "metal" and (system.macos_version is None
                                 or system.macos_version < METAL_MIN_MACOS):
        return (f"Metal kernels require macOS {_v(METAL_MIN_MACOS)} or later, system macOS "
                f"version is {_v(system.macos_version)}")
    return None


_VERSIONED = ("cuda", "rocm", "xpu", "cann")


def _python_order(v: Variant) -> tuple[int, int, int]:
    """abi3 before abi3t, then the newest minimum Python first (as wheel tags)."""
    py = v.python_version or (0, 0)
    return (0 if v.python_abi != "abi3t" else 1, -py[0], -py[1])


def _preference(v: Variant) -> tuple[int, ...]:
    """Sort key within accepted (or rejected) variants; smaller is better (kernels 0.19.1):

    stable ABI (newest ABI first) > torch arch (untagged before cxx11/cxx98-tagged) > tvm-ffi
    arch > SDK with compiled parts > noarch (``torch-universal`` last) > ``sdk-<backend>`` >
    ``sdk``; within each the newest backend minor first, then abi3 before abi3t and the newest
    minimum Python first.
    """
    minor = -(v.backend_version or (0, 0))[1] if v.backend in _VERSIONED else 0
    if v.is_noarch:
        return (4, 0, 0, 1 if v.backend == "universal" else 0, 0, 0, 0)
    if v.is_sdk:
        if v.python_version is None:
            return (5 if v.backend != "agnostic" else 6, 0, 0, 0, 0, 0, 0)
        return (3, 0, 0, 1 if v.backend == "agnostic" else minor, *_python_order(v))
    if v.framework == "torch-stable-abi":
        fv = v.framework_version or (0, 0)
        return (0, -fv[0], -fv[1], minor, *_python_order(v))
    if v.framework == "torch":
        return (1, 0, 1 if v.cxx_abi is not None else 0, minor, *_python_order(v))
    return (2, 0, 0, minor, *_python_order(v))


def format_trace(decisions: list[Decision]) -> str:
    """One line per variant, as upstream's ``kernels versions`` prints it."""
    lines = []
    for d in decisions:
        if d.accepted:
            mark = "compatible, preferred" if d.reason.endswith("preferred") else "compatible"
            lines.append(f"{d.variant} {mark} \u2705")
        else:
            lines.append(f"{d.variant}: {d.reason}")
    return "\n".join(lines)


def _v(version: tuple[int, int] | None) -> str:
    return "none" if version is None else f"{version[0]}.{version[1]}"


def _abi(cxx11: bool | None) -> str:
    return "none" if cxx11 is None else ("cxx11" if cxx11 else "cxx98")
