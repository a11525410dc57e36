"""The kernel mapping: layer name -> device type -> capability range -> mode -> repository.

``register_kernel_mapping`` adds to the mapping of the current context; ``use_kernel_mapping``
scopes changes to a ``with`` block. ``choose_repository`` is the pure decision ``kernelize``
makes per layer: which repository (and for which registered mode), or why none.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from kernelkit.errors import KernelMappingError
from kernelkit.layers.device import DEVICE_TYPES, CUDAProperties, Device, ROCMProperties
from kernelkit.layers.mode import MODE_PRIORITY, Mode

if TYPE_CHECKING:
    from torch import nn


@runtime_checkable
class RepositoryProtocol(Protocol):
    """What a mapping holds: something that loads a kernel layer class."""

    def load(self) -> type[nn.Module]: ...


ModeRepos = dict[Mode, RepositoryProtocol]
# ``{layer_name: {Device | str: repo | {Mode: repo}}}``. Keys and values are checked at run
# time; the static type stays loose because ``Mapping`` is invariant in its key type (a
# ``dict[str, ...]`` literal would not match ``Mapping[Device | str, ...]``).
MappingSpec = Mapping[str, Mapping[Any, Any]]

# Modes a repository may be registered for.
REGISTRABLE_MODES = frozenset({Mode.FALLBACK, *MODE_PRIORITY})
_FULL_RANGE = (0, sys.maxsize)


@dataclass
class _RangeEntry:
    low: int
    high: int
    repos: ModeRepos
    order: int  # registration order, breaks ties between equally narrow ranges (latest wins)


@dataclass
class DeviceRepos:
    """The repositories of one device type, per capability range. Device types without
    capabilities (cpu, mps, ...) have a single, full range."""

    device_type: str
    entries: list[_RangeEntry] = field(default_factory=list)

    def insert(self, device: Device, repos: ModeRepos, order: int) -> None:
        """Register ``repos`` for ``device``'s range, replacing what that exact range had."""
        low, high = _device_range(device)
        self.entries = [e for e in self.entries if (e.low, e.high) != (low, high)]
        self.entries.append(_RangeEntry(low, high, dict(repos), order))

    def lookup(self, capability: int | None) -> ModeRepos | None:
        """The repositories of the narrowest range containing ``capability``. Without a
        known capability (no GPU visible) only an entry registered without properties fits."""
        if capability is None:
            fits = [e for e in self.entries if (e.low, e.high) == _FULL_RANGE]
        else:
            fits = [e for e in self.entries if e.low <= capability <= e.high]
        if not fits:
            return None
        best = min(fits, key=lambda e: (e.high - e.low, -e.order))
        return best.repos

    def repos_for_device(self, device_index: int | None = None) -> ModeRepos | None:
        """The repositories for GPU ``device_index`` (``None``: the current device) by its
        capability, as upstream's ``DeviceRepos.repos_for_device``; device types without
        capabilities ignore the index."""
        return self.lookup(device_capability(self.device_type, device_index))

    def describe_ranges(self) -> str:
        return ", ".join("any" if (e.low, e.high) == _FULL_RANGE else f"{e.low}..{e.high}"
                         for e in self.entries)

    def copy(self) -> DeviceRepos:
        return DeviceRepos(self.device_type, [_RangeEntry(e.low, e.high, dict(e.repos), e.order)
                                              for e in self.entries])


def device_capability(device_type: str, device_index: int | None = None) -> int | None:
    """The capability (``major * 10 + minor``) of GPU ``device_index`` (``None``: the current
    one) for ``cuda``/``rocm``, when one is visible; ``None`` otherwise."""
    if device_type not in ("cuda", "rocm"):
        return None
    import torch

    if not torch.cuda.is_available():
        return None
    major, minor = torch.cuda.get_device_capability(device_index)
    return int(major) * 10 + int(minor)


def _device_range(device: Device) -> tuple[int, int]:
    props = device.properties
    if isinstance(props, (CUDAProperties, ROCMProperties)):
        return props.min_capability, props.max_capability
    return _FULL_RANGE


KernelMapping = dict[str, dict[str, DeviceRepos]]

# The process-wide mapping is the default value: registrations made at import time in one
# thread are seen by all. ``use_kernel_mapping`` scopes a copy to the current context.
_GLOBAL_MAPPING: KernelMapping = {}
_KERNEL_MAPPING: ContextVar[KernelMapping] = ContextVar("kernelkit_kernel_mapping",
                                                        default=_GLOBAL_MAPPING)
_order = iter(range(sys.maxsize))


def current_mapping() -> KernelMapping:
    """The mapping of the current context."""
    return _KERNEL_MAPPING.get()


def _copy_mapping(mapping: KernelMapping) -> KernelMapping:
    # Containers are copied; repository objects are shared (they are immutable values).
    return {name: {dt: repos.copy() for dt, repos in by_device.items()}
            for name, by_device in mapping.items()}


def register_kernel_mapping(mapping: MappingSpec, inherit_mapping: bool = True) -> None:
    """Add ``mapping`` (``{layer_name: {device: repo | {Mode: repo}}}``) to the current
    mapping; with ``inherit_mapping=False`` the current mapping is emptied first.

    A bare repository is registered for ``Mode.FALLBACK``. Registering a device (and, for
    CUDA/ROCm, a capability range) again replaces its whole ``{Mode: repo}`` table.
    """
    normalized = _normalize(mapping)  # validate everything before changing anything
    target = current_mapping()
    if not inherit_mapping:
        target.clear()
    for layer_name, entries in normalized:
        by_device = target.setdefault(layer_name, {})
        for device, repos in entries:
            container = by_device.setdefault(device.type, DeviceRepos(device.type))
            container.insert(device, repos, next(_order))


@contextmanager
def use_kernel_mapping(mapping: MappingSpec, *, inherit_mapping: bool = True) -> Iterator[None]:
    """Use ``mapping`` inside a ``with`` block: on top of the current mapping, or alone with
    ``inherit_mapping=False``. The previous mapping is restored on exit."""
    base = _copy_mapping(current_mapping()) if inherit_mapping else {}
    token = _KERNEL_MAPPING.set(base)
    try:
        register_kernel_mapping(mapping)
        yield
    finally:
        _KERNEL_MAPPING.reset(token)


def _normalize(mapping: MappingSpec) -> list[tuple[str, list[tuple[Device, ModeRepos]]]]:
    if not isinstance(mapping, Mapping):
        raise KernelMappingError(f"a kernel mapping must be a dict of layer name -> "
                                 f"{{device: repository}}, got {type(mapping).__name__}")
    out = []
    for layer_name, by_device in mapping.items():
        if not isinstance(layer_name, str) or not isinstance(by_device, Mapping):
            raise KernelMappingError(
                f"kernel mapping entry {layer_name!r}: expected a layer name (str) mapped to "
                f"{{device: repository}}, got {type(by_device).__name__}")
        out.append((layer_name, [(_to_device(layer_name, d), _to_mode_repos(layer_name, d, r))
                                 for d, r in by_device.items()]))
    return out


def _to_device(layer_name: str, key: Device | str) -> Device:
    device = Device(type=key) if isinstance(key, str) else key
    if not isinstance(device, Device):
        raise KernelMappingError(f"kernel mapping for `{layer_name}`: device key {key!r} must "
                                 f"be a device type string or a Device")
    if device.type not in DEVICE_TYPES:
        raise KernelMappingError(
            f"kernel mapping for `{layer_name}`: Unknown device type {device.type!r}",
            hint=f"use one of: {', '.join(sorted(DEVICE_TYPES))}")
    return device


def _to_mode_repos(layer_name: str, device: Any, value: Any) -> ModeRepos:
    table = dict(value) if isinstance(value, Mapping) else {Mode.FALLBACK: value}
    for mode, repo in table.items():
        if not isinstance(mode, Mode) or mode not in REGISTRABLE_MODES:
            raise KernelMappingError(
                f"kernel mapping for `{layer_name}` on {device}: mode {mode!r} cannot be "
                f"registered", hint="use Mode.FALLBACK, Mode.INFERENCE or Mode.TRAINING, "
                "optionally combined with Mode.TORCH_COMPILE")
        if not isinstance(repo, RepositoryProtocol):
            raise KernelMappingError(
                f"kernel mapping for `{layer_name}` on {device}: {repo!r} is not a repository",
                hint="use LayerRepository, LocalLayerRepository or LockedLayerRepository")
    return table


# --- the decision ---------------------------------------------------------------------------


class Miss(Enum):
    """Why no repository was chosen for a layer."""

    NO_LAYER = "no kernel mapping for the layer name"
    NO_DEVICE = "no kernel mapping for the device type"
    NO_PROPERTIES = "no kernel mapping for the device's capability"
    NO_MODE = "no repository registered for a compatible mode"


@dataclass(frozen=True)
class Choice:
    """The outcome for one layer: ``repo`` and the mode it was registered for, or a ``miss``
    with a sentence saying why."""

    repo: RepositoryProtocol | None
    registered_mode: Mode | None
    miss: Miss | None
    reason: str


def select_repository(repos: ModeRepos, mode: Mode) -> tuple[RepositoryProtocol, Mode] | None:
    """The best repository for ``mode``, following ``MODE_PRIORITY``."""
    if mode not in MODE_PRIORITY:
        raise KernelMappingError(f"unsupported kernelize mode {mode.describe()}")
    for candidate in MODE_PRIORITY[mode]:
        if candidate in repos:
            return repos[candidate], candidate
    return None


def choose_repository(mapping: KernelMapping, layer_name: str, device_type: str,
                      capability: int | None, mode: Mode) -> Choice:
    """Decide which repository serves ``layer_name`` on ``device_type`` for ``mode``."""
    by_device = mapping.get(layer_name)
    if by_device is None:
        known = ", ".join(sorted(mapping)) or "none"
        return Choice(None, None, Miss.NO_LAYER,
                      f"no kernel mapping for layer name `{layer_name}` (mapped: {known})")
    container = by_device.get(device_type)
    if container is None:
        return Choice(None, None, Miss.NO_DEVICE,
                      f"no kernel mapping for `{layer_name}` with device type `{device_type}` "
                      f"(mapped device types: {', '.join(sorted(by_device)) or 'none'})")
    repos = container.lookup(capability)
    if repos is None:
        cap = "unknown (no GPU visible)" if capability is None else str(capability)
        return Choice(None, None, Miss.NO_PROPERTIES,
                      f"no kernel mapping for `{layer_name}` on `{device_type}` with the right "
                      f"properties: capability {cap}, "
                      f"registered ranges {container.describe_ranges()}")
    selected = select_repository(repos, mode)
    if selected is None:
        have = ", ".join(m.describe() for m in repos) or "none"
        return Choice(None, None, Miss.NO_MODE,
                      f"No repository for `{layer_name}` for configuration mode="
                      f"{mode.describe()} (registered modes: {have})")
    repo, registered = selected
    return Choice(repo, registered, None,
                  f"registered for mode {registered.describe()} on `{device_type}`")
