"""Variant names: parse and format (``torch213-cxx11-cpu-x86_64-linux``, ``torch-cuda``, ...).

Grammar (upstream-builder.md §2.1): ``XY`` is the major digits followed by the minor digits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kernelkit.util.versions import major_minor

_COMPUTE_RE = re.compile(r"^(cpu|metal|neuron|tpu|cu\d+|rocm\d+|xpu\d+|cann\d+)\Z")
_ARCH_RE = re.compile(
    r"^(?:(?P<stable>torch-stable-abi)(?P<sv>\d+)|(?P<tvm>tvm-ffi)(?P<tv>\d+)|torch(?P<torch>\d+))"
    r"(?:-(?P<abi>cxx11|cxx98))?"
    r"-(?P<compute>[a-z]+\d*)-(?P<cpu>x86_64|aarch64)-(?P<os>linux|darwin|windows)$"
)
_NOARCH_RE = re.compile(
    r"^torch-(?P<backend>cpu|cuda|metal|rocm|xpu|tpu|neuron|npu|cann|universal)$"
)


def xy(version: str) -> str:
    """``"2.13.0"`` -> ``"213"``, ``"13.0"`` -> ``"130"``, ``"2"`` -> ``"20"``."""
    parts = version.split("+")[0].split(".")
    major = parts[0]
    minor = parts[1] if len(parts) > 1 else "0"
    return f"{int(major)}{int(minor)}"


def from_xy(digits: str) -> tuple[int, int]:
    """``"213"`` -> ``(2, 13)``: the first digit is the major version (torch, CUDA < 10 aside)."""
    return int(digits[0]), int(digits[1:] or "0")


def cuda_from_xy(digits: str) -> tuple[int, int]:
    """CUDA tags: ``cu126`` -> (12, 6), ``cu130`` -> (13, 0), ``cu118`` -> (11, 8)."""
    return int(digits[:-1]), int(digits[-1])


@dataclass(frozen=True)
class Variant:
    """A parsed variant name. ``framework`` is ``torch``, ``torch-stable-abi``, ``tvm-ffi`` or
    ``torch-noarch``; arch fields are ``None`` for noarch variants."""

    name: str
    framework: str
    backend: str  # cpu, cuda, rocm, xpu, metal, ... (noarch: the backend or "universal")
    framework_version: tuple[int, int] | None = None  # torch / stable-abi / tvm-ffi (major, minor)
    backend_version: tuple[int, int] | None = None  # CUDA/ROCm/XPU/CANN (major, minor)
    cxx_abi: str | None = None  # "cxx11", "cxx98" or None
    cpu: str | None = None
    os: str | None = None

    @property
    def is_noarch(self) -> bool:
        return self.framework == "torch-noarch"

    @property
    def compute(self) -> str:
        """The compute tag as it appears in the name (``cu130``, ``cpu``, ...)."""
        if self.is_noarch:
            return self.backend
        return compute_tag(self.backend, self.backend_version)

    def __str__(self) -> str:
        return self.name


# The one compute-tag table: a versioned backend's prefix in variant names (``cu130``).
COMPUTE_PREFIXES: dict[str, str] = {"cuda": "cu", "rocm": "rocm", "xpu": "xpu", "cann": "cann"}


def compute_tag(backend: str, version: tuple[int, int] | None) -> str:
    """The backend as it appears in variant names: ``cu130``, ``rocm70``, ``cpu``, ..."""
    prefix = COMPUTE_PREFIXES.get(backend)
    if prefix is None or version is None:
        return backend
    return f"{prefix}{version[0]}{version[1]}"


def is_variant_name(name: str) -> bool:
    """Whether :func:`parse_variant` accepts ``name``."""
    try:
        parse_variant(name)
    except ValueError:
        return False
    return True


def parse_variant(name: str) -> Variant:
    """Parse a variant name; raise ``ValueError`` naming the problem for anything else."""
    m = _NOARCH_RE.match(name)
    if m:
        return Variant(name=name, framework="torch-noarch", backend=m.group("backend"))
    m = _ARCH_RE.match(name)
    if not m or not _COMPUTE_RE.match(m.group("compute")):
        raise ValueError(f"not a kernel variant name: {name!r}")
    compute = m.group("compute")
    backend, bver = _parse_compute(compute)
    if m.group("stable"):
        framework, fv = "torch-stable-abi", from_xy(m.group("sv"))
    elif m.group("tvm"):
        framework, fv = "tvm-ffi", from_xy(m.group("tv"))
    else:
        framework, fv = "torch", from_xy(m.group("torch"))
    return Variant(
        name=name,
        framework=framework,
        backend=backend,
        framework_version=fv,
        backend_version=bver,
        cxx_abi=m.group("abi"),
        cpu=m.group("cpu"),
        os=m.group("os"),
    )


def _parse_compute(compute: str) -> tuple[str, tuple[int, int] | None]:
    for backend, prefix in COMPUTE_PREFIXES.items():
        if compute.startswith(prefix) and compute[len(prefix):].isdigit():
            digits = compute[len(prefix):]
            if backend == "cuda":
                return backend, cuda_from_xy(digits)
            if backend == "xpu":  # xpu20253 -> (2025, 3)
                return backend, (int(digits[:4]), int(digits[4:] or "0"))
            return backend, from_xy(digits)
    return compute, None


def format_tvm_ffi_variant(tvm_ffi_version: str, backend: str, backend_version: str | None,
                           cpu: str, os: str) -> str:
    """Name of a tvm-ffi build: ``tvm-ffi01-cpu-x86_64-linux``, ``tvm-ffi01-cu126-x86_64-linux``
    (the torch version is not part of it)."""
    arch = format_torch_variant("0", backend, backend_version, cpu, os, stable_abi="0")
    return f"tvm-ffi{xy(tvm_ffi_version)}-" + arch.removeprefix("torch-stable-abi00-")


def format_torch_variant(
    torch_version: str,
    backend: str,
    backend_version: str | None,
    cpu: str,
    os: str,
    *,
    stable_abi: str | None = None,
) -> str:
    """Name of an arch build: ``torch213-cxx11-cpu-x86_64-linux``,
    ``torch214-cxx11-cu130-x86_64-linux``, ``torch-stable-abi211-cu126-x86_64-linux``."""
    if backend in ("cuda", "rocm", "cann"):
        if backend_version is None:
            raise ValueError(f"backend {backend} needs a version")
        compute = compute_tag(backend, major_minor(backend_version))
    elif backend == "xpu":
        if backend_version is None:
            raise ValueError("backend xpu needs a version")
        parts = backend_version.split(".")
        compute = f"xpu{parts[0]}{parts[1] if len(parts) > 1 else '0'}"
    else:
        compute = backend
    if stable_abi is not None:
        return f"torch-stable-abi{xy(stable_abi)}-{compute}-{cpu}-{os}"
    abi = "-cxx11" if os == "linux" else ""
    return f"torch{xy(torch_version)}{abi}-{compute}-{cpu}-{os}"

