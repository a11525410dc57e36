"""``Device`` and capability ranges used as mapping keys (upstream-loader.md §1.3)."""

from __future__ import annotations

from dataclasses import dataclass

# Device types a mapping may name and kernelize may be asked for.
DEVICE_TYPES = frozenset({"cpu", "cuda", "mps", "neuron", "npu", "rocm", "tpu", "xpu"})


def _check_range(cls_name: str, min_capability: object, max_capability: object) -> None:
    for field, value in (("min_capability", min_capability), ("max_capability", max_capability)):
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"{cls_name}.{field} must be an int such as 80 (for 8.0), "
                            f"got {value!r}")
    assert isinstance(min_capability, int) and isinstance(max_capability, int)
    if min_capability > max_capability:
        raise ValueError(f"{cls_name}: min_capability ({min_capability}) must be <= "
                         f"max_capability ({max_capability})")


@dataclass(frozen=True)
class CUDAProperties:
    """CUDA compute capability range, inclusive; a capability is ``major * 10 + minor``
    (8.6 -> 86). A mapping entry with properties serves GPUs inside the range."""

    min_capability: int
    max_capability: int

    def __post_init__(self) -> None:
        _check_range("CUDAProperties", self.min_capability, self.max_capability)

    def contains(self, capability: int) -> bool:
        return self.min_capability <= capability <= self.max_capability


@dataclass(frozen=True)
class ROCMProperties:
    """ROCm capability range, inclusive, encoded like ``CUDAProperties``."""

    min_capability: int
    max_capability: int

    def __post_init__(self) -> None:
        _check_range("ROCMProperties", self.min_capability, self.max_capability)

    def contains(self, capability: int) -> bool:
        return self.min_capability <= capability <= self.max_capability


@dataclass(frozen=True)
class Device:
    """A device type (``"cuda"``, ``"cpu"``, ...) with optional capability properties."""

    type: str
    properties: CUDAProperties | ROCMProperties | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.type, str):
            raise TypeError(f"Device.type must be a string such as 'cuda', got {self.type!r}")
        if isinstance(self.properties, CUDAProperties) and self.type != "cuda":
            raise ValueError("CUDAProperties is only supported for 'cuda' devices.")
        if isinstance(self.properties, ROCMProperties) and self.type != "rocm":
            raise ValueError("ROCMProperties is only supported for 'rocm' devices.")
        if self.properties is not None and not isinstance(
                self.properties, (CUDAProperties, ROCMProperties)):
            raise TypeError(f"Device.properties must be CUDAProperties, ROCMProperties or None, "
                            f"got {self.properties!r}")

    def __str__(self) -> str:
        if self.properties is None:
            return self.type
        p = self.properties
        return f"{self.type}[capability {p.min_capability}..{p.max_capability}]"
