"""``check_arch``: does a build's ``backend.archs`` cover this device (upstream's
``ArchValidator``)?

The decision is pure (:func:`cuda_arch_supports`, :func:`supports_device`); only
:func:`current_device` asks torch, and only for a build that declares archs for CUDA or ROCm
(a CPU kernel never imports torch here). Without a visible GPU nothing is checked, as upstream:
an arch cannot be wrong for a device that is not there.

CUDA archs are compute capabilities ``X.Y`` with an optional ``a`` (that capability only) or
``f`` (the family: same major, same or newer minor) suffix and an optional ``+PTX`` (any newer
capability, JIT-compiled); a plain ``X.Y`` runs on the same major with the same or a newer
minor. An arch in another form (a newer builder's) says nothing; when no arch says anything,
the build is assumed to fit. ROCm archs are ``gfx`` names, compared without feature flags.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kernelkit.artifact.metadata import Metadata
from kernelkit.errors import UnsupportedArchError


@dataclass(frozen=True)
class DeviceArch:
    """The current GPU: ``backend`` ``cuda`` with ``capability`` (major, minor), or ``rocm``
    with ``gfx`` (``gfx90a``, feature flags stripped)."""

    backend: str
    capability: tuple[int, int] | None = None
    gfx: str | None = None

    def describe(self) -> str:
        if self.capability is not None:
            return f"CUDA capability {self.capability[0]}.{self.capability[1]}"
        return f"ROCm arch {self.gfx}"


def parse_cuda_arch(arch: str) -> tuple[int, int, str, bool] | None:
    """``"9.0a+PTX"`` -> ``(9, 0, "a", True)``; ``None`` for any other form."""
    ptx = arch.endswith("+PTX")
    body = arch[:-4] if ptx else arch
    suffix = body[-1] if body.endswith(("a", "f")) else ""
    body = body[:-1] if suffix else body
    major, sep, minor = body.partition(".")
    if not sep or not major.isdigit() or not minor.isdigit():
        return None
    return int(major), int(minor), suffix, ptx


def cuda_arch_supports(arch: str, capability: tuple[int, int]) -> bool | None:
    """Whether one declared arch runs on ``capability``; ``None``: the arch's form is unknown."""
    parsed = parse_cuda_arch(arch)
    if parsed is None:
        return None
    major, minor, suffix, ptx = parsed
    if suffix == "a":
        return capability == (major, minor)
    if suffix == "f" or not ptx:
        return capability[0] == major and capability[1] >= minor
    return capability >= (major, minor)


def supports_device(backend: str, archs: tuple[str, ...] | None, device: DeviceArch) -> bool:
    """Whether a build for ``backend`` declaring ``archs`` runs on ``device``."""
    if not archs or backend != device.backend:
        return True
    if device.capability is not None:
        answers = [cuda_arch_supports(a, device.capability) for a in archs]
        return all(a is None for a in answers) or any(answers)
    return device.gfx in archs


def current_device(backend: str) -> DeviceArch | None:
    """The current GPU for a ``cuda`` or ``rocm`` build, or ``None`` (no such GPU visible,
    or the installed torch is built for another backend)."""
    if backend not in ("cuda", "rocm"):
        return None
    import torch

    is_rocm = getattr(torch.version, "hip", None) is not None
    if (backend == "rocm") != is_rocm or (backend == "cuda" and torch.version.cuda is None):
        return None
    if not torch.cuda.is_available():
        return None
    if backend == "cuda":
        major, minor = torch.cuda.get_device_capability()
        return DeviceArch("cuda", capability=(int(major), int(minor)))
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    return DeviceArch("rocm", gfx=str(props.gcnArchName).split(":")[0])


def check_arch(metadata: Metadata, variant_dir: Path) -> None:
    """``UnsupportedArchError`` when the build's archs do not cover the current device."""
    if not metadata.archs:
        return
    device = current_device(metadata.backend)
    if device is not None and not supports_device(metadata.backend, metadata.archs, device):
        raise UnsupportedArchError(kernel=metadata.name, variant=variant_dir.name,
                                   device=device.describe(), archs=metadata.archs)
