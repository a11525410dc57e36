"""The supported build matrix (``matrix.json``, DATA) and the variants one kernel builds from it.

Upstream-builder.md §2.2-§2.5: a table of build configurations (torch series x backend x backend
version x systems, with a ``bundle`` flag marking the required set), CUDA capabilities per
toolkit, and the filter that turns a manifest into its build targets. Pure: nothing here looks
at the machine (see ``kernelkit.builder.toolchain.envs`` and ``kernelkit.cli.cmd_list_variants``
for that).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from kernelkit.manifest.model import Manifest, TorchFramework, TorchNoarch, TvmFfi, Version
from kernelkit.util.versions import major_minor
from kernelkit.variants.name import (
    BUILD_NAME_GRAMMAR,
    format_torch_variant,
    format_tvm_ffi_variant,
    to_grammar,
)

DEFAULT_SYSTEM = "x86_64-linux"
TargetKind = Literal["arch", "stable-abi", "tvm-ffi", "noarch"]
# Default bounds when the manifest gives none (nix-builder/lib/build.nix).
_TORCH_MIN, _TORCH_MAX = Version.parse("2.0"), Version.parse("99.9")
_CUDA_MIN, _CUDA_MAX = Version.parse("11.8"), Version.parse("99.9")
# Default shell / CI order of backends (upstream §2.3 step 5).
_BACKEND_ORDER = {"cuda": 0, "rocm": 1, "xpu": 2, "metal": 3}


@dataclass(frozen=True)
class Pin:
    """How pip gets the torch of one configuration: ``torch==<torch>`` (+ an extra index URL),
    and the other build dependencies of the variant (``apache-tvm-ffi==...`` for tvm-ffi)."""

    torch: str
    index_url: str | None
    extras: tuple[str, ...] = ()

    @property
    def requirement(self) -> str:
        return f"torch=={self.torch}"

    @property
    def requirements(self) -> list[str]:
        return [self.requirement, *self.extras]


@dataclass(frozen=True)
class MatrixEntry:
    """One build configuration of ``matrix.json``."""

    torch: str  # the series, "2.13"
    torch_pin: str  # the exact pip version, "2.13.0+cpu"
    index_url: str | None
    backend: str
    backend_version: str | None
    systems: tuple[str, ...]
    bundle: bool
    tvm_ffi: str | None = None
    overrides: tuple[tuple[str, Pin], ...] = ()

    def pin_for(self, system: str) -> Pin:
        for sys_name, pin in self.overrides:
            if sys_name == system:
                return pin
        return Pin(self.torch_pin, self.index_url)

    def arch_variant(self, system: str) -> str:
        cpu, os_name = system.split("-", 1)
        return format_torch_variant(self.torch, self.backend, self.backend_version, cpu, os_name)


@dataclass(frozen=True)
class ToolkitWheels:
    """pip packages that provide a CUDA toolkit of one major version, and where they unpack."""

    packages: tuple[str, ...]
    roots: tuple[str, ...]  # relative to site-packages

    def requirements(self, cuda_version: str) -> list[str]:
        major, minor = major_minor(cuda_version)
        return [f"{p}=={major}.{minor}.*" for p in self.packages]


@dataclass(frozen=True)
class Matrix:
    entries: tuple[MatrixEntry, ...]
    systems: tuple[str, ...]
    cuda_capabilities: tuple[tuple[Version, tuple[str, ...]], ...]  # newest toolkit first
    cuda_supported_archs: tuple[str, ...]
    rocm_archs: tuple[str, ...]
    toolkit_wheels: Mapping[str, ToolkitWheels]
    # tvm-ffi series ("0.1") -> the pip requirement tvm-ffi variants are built with
    tvm_ffi_pins: Mapping[str, str] = field(default_factory=dict)

    def toolkit_wheels_for(self, cuda_version: str) -> ToolkitWheels | None:
        return self.toolkit_wheels.get(str(major_minor(cuda_version)[0]))


@dataclass(frozen=True)
class BuildTarget:
    """One variant a kernel builds, with the configuration (and pins) it is built from."""

    variant: str
    torch: str
    backend: str
    backend_version: str | None
    required: bool
    system: str = DEFAULT_SYSTEM
    kind: TargetKind = "arch"
    pin: Pin | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "variant": self.variant, "kind": self.kind, "torch": self.torch,
            "backend": self.backend, "backend-version": self.backend_version,
            "system": self.system, "required": self.required,
            "torch-pin": self.pin.torch if self.pin else None,
            "extra-pins": list(self.pin.extras) if self.pin else [],
            "index-url": self.pin.index_url if self.pin else None,
        }


# --- loading ---------------------------------------------------------------------------------


def _entry(raw: Mapping[str, Any]) -> MatrixEntry:
    overrides = tuple(
        (system, Pin(o.get("torch-pin", raw["torch-pin"]),
                     o.get("index-url", raw.get("index-url"))))
        for system, o in sorted(raw.get("overrides", {}).items())
    )
    return MatrixEntry(
        torch=raw["torch"], torch_pin=raw["torch-pin"], index_url=raw.get("index-url"),
        backend=raw["backend"], backend_version=raw.get("backend-version"),
        systems=tuple(raw["systems"]), bundle=bool(raw["bundle"]), tvm_ffi=raw.get("tvm-ffi"),
        overrides=overrides,
    )


def parse_matrix(data: Mapping[str, Any]) -> Matrix:
    """Build a :class:`Matrix` from the JSON structure of ``matrix.json``."""
    caps = sorted(
        ((Version.parse(c["min-toolkit"]), tuple(c["capabilities"]))
         for c in data["cuda-capabilities"]),
        key=lambda c: c[0], reverse=True,
    )
    wheels = {
        major: ToolkitWheels(tuple(w["packages"]), tuple(w["roots"]))
        for major, w in data.get("cuda-toolkit-wheels", {}).items()
    }
    return Matrix(
        entries=tuple(_entry(e) for e in data["configs"]),
        systems=tuple(data["systems"]),
        cuda_capabilities=tuple(caps),
        cuda_supported_archs=tuple(data.get("cuda-supported-archs", ())),
        rocm_archs=tuple(data.get("rocm-archs", ())),
        toolkit_wheels=wheels,
        tvm_ffi_pins=dict(data.get("tvm-ffi-pins", {})),
    )


@cache
def load_matrix(path: Path | None = None) -> Matrix:
    """The matrix shipped with kernelkit (or the one at ``path``)."""
    if path is not None:
        return parse_matrix(json.loads(path.read_text(encoding="utf-8")))
    text = resources.files("kernelkit.variants").joinpath("matrix.json").read_text(encoding="utf-8")
    return parse_matrix(json.loads(text))


def default_cuda_capabilities(toolkit: str, matrix: Matrix | None = None) -> list[str]:
    """CUDA capabilities compiled by default with CUDA ``toolkit`` ("13.0" -> 7.5 ... 12.1+PTX)."""
    version = Version.parse(".".join(str(p) for p in major_minor(toolkit)))
    for minimum, caps in (matrix or load_matrix()).cuda_capabilities:
        if version >= minimum:
            return list(caps)
    raise ValueError(f"no CUDA capability list for toolkit {toolkit}")


# --- the targets of one manifest -------------------------------------------------------------


def _in_bounds(entry: MatrixEntry, manifest: Manifest) -> bool:
    fw = manifest.framework
    tmin = fw.minver if isinstance(fw, TorchFramework) and fw.minver else _TORCH_MIN
    tmax = fw.maxver if isinstance(fw, TorchFramework) and fw.maxver else _TORCH_MAX
    if not tmin <= Version.parse(entry.torch) <= tmax:
        return False
    if entry.backend == "cuda" and entry.backend_version is not None:
        cuda = manifest.general.cuda
        cmin = cuda.minver if cuda and cuda.minver else _CUDA_MIN
        cmax = cuda.maxver if cuda and cuda.maxver else _CUDA_MAX
        return cmin <= Version.parse(entry.backend_version) <= cmax
    return True


def target_kind(manifest: Manifest, backend: str) -> TargetKind:
    """What kind of variant ``manifest`` builds for ``backend`` (upstream §2.3 step 4): tvm-ffi;
    noarch for ``[torch-noarch]`` and for a backend without a compiled component; stable-abi for
    a backend under ``[torch.stable-abi]``; else arch."""
    fw = manifest.framework
    if isinstance(fw, TvmFfi):
        return "tvm-ffi"
    if isinstance(fw, TorchNoarch) or not manifest.kernels_for(backend):
        return "noarch"
    return "stable-abi" if fw.stable_abi_for(backend) is not None else "arch"


def _name_and_kind(entry: MatrixEntry, manifest: Manifest, system: str) -> tuple[str, TargetKind]:
    fw = manifest.framework
    cpu, os_name = system.split("-", 1)
    kind = target_kind(manifest, entry.backend)
    if kind == "tvm-ffi":
        name = format_tvm_ffi_variant(entry.tvm_ffi or "0", entry.backend, entry.backend_version,
                                      cpu, os_name)
        return name, "tvm-ffi"
    if kind == "noarch":
        return f"torch-{entry.backend}", "noarch"
    assert isinstance(fw, TorchFramework)
    stable = fw.stable_abi_for(entry.backend)
    if stable is not None:
        name = format_torch_variant(entry.torch, entry.backend, entry.backend_version, cpu,
                                    os_name, stable_abi=str(stable))
        return name, "stable-abi"
    return entry.arch_variant(system), "arch"


def _applicable(manifest: Manifest, system: str, matrix: Matrix) -> list[MatrixEntry]:
    tvm = isinstance(manifest.framework, TvmFfi)
    return [
        e for e in matrix.entries
        if system in e.systems and e.backend in manifest.general.backends
        and (not tvm or e.tvm_ffi is not None) and _in_bounds(e, manifest)
    ]


def _default_order(entry: MatrixEntry) -> tuple[Any, ...]:
    """Bundle configs first; CUDA < ROCm < XPU < Metal < others; newer torch first."""
    return (not entry.bundle, _BACKEND_ORDER.get(entry.backend, 9),
            tuple(-p for p in Version.parse(entry.torch).parts))


def targets_for(manifest: Manifest, *, system: str = DEFAULT_SYSTEM,
                matrix: Matrix | None = None) -> list[BuildTarget]:
    """The variants ``manifest`` builds on ``system`` (upstream-builder.md §2.3), in matrix order.

    Honours ``general.backends``, ``[torch] minver/maxver``, ``[general.cuda] minver/maxver``,
    the stable-ABI dedup (newest torch per backend version) and noarch naming. A name produced
    by several configs (noarch, tvm-ffi) is built from the first one in the default order
    (bundle configs first, newer torch first); it is required if any of them is a bundle config.
    """
    matrix = matrix or load_matrix()
    entries = _applicable(manifest, system, matrix)
    chosen: dict[str, tuple[MatrixEntry, TargetKind]] = {}
    required: dict[str, bool] = {}
    for entry in sorted(entries, key=_default_order):
        name, kind = _name_and_kind(entry, manifest, system)
        required[name] = required.get(name, False) or (entry.bundle and kind in ("arch", "noarch"))
        if name not in chosen or _newer_stable(kind, entry, chosen[name][0]):
            chosen[name] = (entry, kind)
    position = {e: i for i, e in enumerate(matrix.entries)}
    ordered = sorted(chosen.items(), key=lambda item: position[item[1][0]])
    return [
        BuildTarget(variant=name, torch=e.torch, backend=e.backend,
                    backend_version=e.backend_version, required=required[name], system=system,
                    kind=kind, pin=_pin(e, kind, system, matrix))
        for name, (e, kind) in ordered
    ]


def _pin(entry: MatrixEntry, kind: TargetKind, system: str, matrix: Matrix) -> Pin:
    pin = entry.pin_for(system)
    extra = matrix.tvm_ffi_pins.get(entry.tvm_ffi or "") if kind == "tvm-ffi" else None
    if extra is not None:
        return replace(pin, extras=(extra,))
    return pin


def _newer_stable(kind: TargetKind, new: MatrixEntry, old: MatrixEntry) -> bool:
    return kind == "stable-abi" and Version.parse(new.torch) > Version.parse(old.torch)


def required_variants(*, backend: str | None = None, system: str | None = None,
                      matrix: Matrix | None = None) -> dict[tuple[str, str], list[str]]:
    """The required (bundle) arch variant names per ``(backend, system)`` (upstream §2.4)."""
    matrix = matrix or load_matrix()
    out: dict[tuple[str, str], list[str]] = {}
    for entry in matrix.entries:
        if not entry.bundle or (backend is not None and entry.backend != backend):
            continue
        for sys_name in entry.systems:
            if system is None or sys_name == system:
                out.setdefault((entry.backend, sys_name), []).append(entry.arch_variant(sys_name))
    return {key: sorted(set(names)) for key, names in sorted(out.items())}


# --- compliance across the matrix -----------------------------------------------------------


@dataclass(frozen=True)
class MatrixCompliance:
    """For one ``(backend, system)``: the required variants, and those missing from a build."""

    backend: str
    system: str
    required: tuple[str, ...]
    missing: tuple[str, ...]
    # Missing variants the manifest itself excludes (torch/cuda bounds): it can never comply.
    excluded_by_manifest: tuple[str, ...] = ()

    @property
    def compliant(self) -> bool:
        return not self.missing


def matrix_compliance(present: Iterable[str], manifest: Manifest, *,
                      systems: Iterable[str] | None = None,
                      matrix: Matrix | None = None) -> list[MatrixCompliance]:
    """Which required variants are missing from ``present`` (the variant names of a build tree,
    :func:`kernelkit.check.api.check_matrix` reads them from disk) per backend and system.

    Only backends in ``general.backends`` are considered; a backend without a compiled
    component needs its noarch name (``torch-<backend>``) instead of the arch names.
    """
    matrix = matrix or load_matrix()
    present = {_as_built(n) for n in present}
    out: list[MatrixCompliance] = []
    for (backend, system), names in required_variants(matrix=matrix).items():
        if backend not in manifest.general.backends or (systems and system not in systems):
            continue
        if isinstance(manifest.framework, TorchNoarch) or not manifest.kernels_for(backend):
            names = [f"torch-{backend}"]
        buildable = {t.variant for t in targets_for(manifest, system=system, matrix=matrix)}
        missing = tuple(n for n in names if n not in present)
        out.append(MatrixCompliance(backend, system, tuple(names), missing,
                                    tuple(n for n in missing if n not in buildable)))
    return out


def _as_built(name: str) -> str:
    """``name`` in the grammar builds are named in (a 0.19-grammar name of a required variant
    counts as that variant); names that do not parse, or have no such form, as they are."""
    try:
        return to_grammar(name, BUILD_NAME_GRAMMAR)
    except ValueError:
        return name
