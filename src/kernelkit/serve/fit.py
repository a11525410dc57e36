"""Which variant fits which system, for the kernel page: pure functions of variant names.

:func:`requirement` says in words what a machine needs to load a variant (from
``kernelkit.variants`` parsing); :func:`fit_options` and :func:`check_fit` answer "which
variant loads on *this* machine?" for a machine described by a small form (torch version,
backend, platform, Python), with the loader's own acceptance and preference rules
(``variants.choose.rank_variants``: the decision kernelkit and upstream ``kernels`` 0.19 make).
The form's values are checked by membership in the options offered, so nothing a client sends
is parsed further.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kernelkit.variants.choose import MINOR_COMPATIBLE, Decision, rank_variants
from kernelkit.variants.host import System
from kernelkit.variants.name import Variant, compute_tag, parse_variant

_BACKENDS = {"cpu": "CPU", "cuda": "CUDA", "rocm": "ROCm", "xpu": "XPU", "metal": "Metal",
             "neuron": "Neuron", "tpu": "TPU", "cann": "CANN", "npu": "CANN",
             "universal": "any backend", "agnostic": "any backend"}
_OSES = {"linux": "Linux", "darwin": "macOS", "windows": "Windows"}
PYTHONS = ("3.9", "3.10", "3.11", "3.12", "3.13", "3.14", "3.15")
DEFAULT_PYTHON = "3.12"
DEFAULT_PLATFORM = "x86_64-linux"
METAL_MACOS = (26, 0)  # what the form assumes for a macOS machine (Metal builds need 26)


def _v(version: tuple[int, int] | None) -> str:
    return "?" if version is None else f"{version[0]}.{version[1]}"


def backend_label(backend: str, version: tuple[int, int] | None = None) -> str:
    name = _BACKENDS.get(backend, backend)
    return name if version is None else f"{name} {_v(version)}"


def requirement(name: str) -> str:
    """What a machine needs to load variant ``name``, e.g. ``Linux x86_64 · torch 2.13 (C++11
    ABI) · CUDA 12.6 to 12.x · Python 3.9 or later``."""
    try:
        v = parse_variant(name)
    except ValueError:
        return "not a variant name the loaders know: never chosen"
    if v.is_noarch:
        where = ("any machine" if v.backend == "universal"
                 else f"any {backend_label(v.backend)} machine")
        mlx = " with MLX installed" if v.framework == "mlx-noarch" else ""
        return f"{where}{mlx}, any torch (Python code only)"
    parts = []
    if v.cpu and v.os:
        parts.append(f"{_OSES.get(v.os, v.os)} {v.cpu}")
    parts += _framework(v)
    parts.append(_backend(v))
    if v.python_version is not None:
        free = " (free-threaded)" if v.python_abi == "abi3t" else ""
        parts.append(f"Python {_v(v.python_version)} or later{free}")
    return " \u00b7 ".join(p for p in parts if p)


def _framework(v: Variant) -> list[str]:
    fv = v.framework_version
    if v.framework == "torch":
        abi = {"cxx11": " (C++11 ABI)", "cxx98": " (pre-C++11 ABI)"}.get(v.cxx_abi or "", "")
        return [f"torch {_v(fv)}{abi}"]
    if v.framework == "torch-stable-abi":
        return [f"torch {_v(fv)} or later (stable ABI)"]
    if v.framework == "tvm-ffi":
        return [f"tvm-ffi {_v(fv)}"]
    return ["SDK"] if v.is_sdk else []


def _backend(v: Variant) -> str:
    if v.backend in MINOR_COMPATIBLE and v.backend_version is not None:
        major = v.backend_version[0]
        return f"{backend_label(v.backend, v.backend_version)} to {major}.x"
    if v.backend == "metal":
        return f"Metal (macOS {_v(METAL_MACOS)} or later)"
    return backend_label(v.backend, v.backend_version)


@dataclass(frozen=True)
class FitOptions:
    """The choices of the form, from the repository's own variants: ``(value, label)``."""

    torch: tuple[tuple[str, str], ...]
    compute: tuple[tuple[str, str], ...]
    platform: tuple[tuple[str, str], ...]
    python: tuple[tuple[str, str], ...]


def fit_options(names: Iterable[str]) -> FitOptions:
    torch: set[tuple[int, int]] = set()
    compute: dict[str, tuple[str, tuple[int, int] | None]] = {"cpu": ("cpu", None)}
    platforms = {DEFAULT_PLATFORM}
    for name in names:
        try:
            v = parse_variant(name)
        except ValueError:
            continue
        if v.framework in ("torch", "torch-stable-abi") and v.framework_version:
            torch.add(v.framework_version)
        if v.backend in _BACKENDS and v.backend not in ("universal", "agnostic", "npu"):
            compute.setdefault(compute_tag(v.backend, v.backend_version),
                               (v.backend, v.backend_version))
        if v.cpu and v.os:
            platforms.add(f"{v.cpu}-{v.os}")
    return FitOptions(
        torch=tuple((_v(t), f"torch {_v(t)}") for t in sorted(torch, reverse=True)),
        compute=tuple((tag, backend_label(*compute[tag])) for tag in sorted(compute)),
        platform=tuple((p, _platform_label(p)) for p in sorted(platforms)),
        python=tuple((p, f"Python {p}") for p in PYTHONS))


def _platform_label(platform: str) -> str:
    cpu, _, os_name = platform.partition("-")
    return f"{_OSES.get(os_name, os_name)} {cpu}"


@dataclass(frozen=True)
class Fit:
    """The machine the form described and the loader's decision for every variant."""

    system: System
    decisions: tuple[Decision, ...]


def check_fit(names: list[str], options: FitOptions,
              query: Mapping[str, str]) -> Fit | None:
    """The decisions for the machine in ``query`` (``torch``, ``compute``, ``platform``,
    ``python``), or ``None`` when the form was not sent or a value is not one offered."""
    if "compute" not in query:
        return None
    picked = {}
    for key, offered in (("torch", options.torch), ("compute", options.compute),
                         ("platform", options.platform), ("python", options.python)):
        value = query.get(key, "")
        if value and value not in {v for v, _ in offered}:
            return None
        picked[key] = value
    system = _system(picked, names)
    return Fit(system, tuple(rank_variants(names, system)))


def _system(picked: Mapping[str, str], names: list[str]) -> System:
    cpu, _, os_name = (picked["platform"] or DEFAULT_PLATFORM).partition("-")
    backend, version = "cpu", None
    for name in names:  # the compute tag back to (backend, version), from the variants
        try:
            v = parse_variant(name)
        except ValueError:
            continue
        if compute_tag(v.backend, v.backend_version) == picked["compute"]:
            backend, version = v.backend, v.backend_version
            break
    torch = tuple(int(x) for x in picked["torch"].split(".")) if picked["torch"] else None
    py = tuple(int(x) for x in (picked["python"] or DEFAULT_PYTHON).split("."))
    return System(torch_version=(torch[0], torch[1]) if torch else None,
                  cxx11_abi=True if os_name == "linux" and torch else None,
                  backend=backend, backend_version=version, cpu=cpu, os=os_name,
                  macos_version=METAL_MACOS if os_name == "darwin" else None,
                  python_version=(py[0], py[1]))
