"""Layer repositories: where ``kernelize`` gets a kernel layer class from.

Each repository is an immutable value (``__eq__``/``__hash__``) with ``load() -> type``; the
kernel is only downloaded/imported when ``kernelize`` first needs it.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from kernelkit.errors import KernelMappingError

if TYPE_CHECKING:
    from torch import nn

TrustArg = bool | list[str]


def _frozen_trust(trust: TrustArg) -> bool | tuple[str, ...]:
    return tuple(trust) if isinstance(trust, list) else bool(trust)


def _trust_arg(trust: bool | tuple[str, ...]) -> TrustArg:
    return list(trust) if isinstance(trust, tuple) else trust


def get_kernel_layer(repo: object, kernel: ModuleType, layer_name: str) -> type[nn.Module]:
    """``kernel.layers.<layer_name>``, or a ``KernelMappingError`` saying what is missing."""
    layers = getattr(kernel, "layers", None)
    if layers is None:
        raise KernelMappingError(f"Kernel repo {repo} does not define any layers.",
                                 hint="a kernel exposes layers in its `layers` sub-module")
    layer = getattr(layers, layer_name, None)
    if layer is None:
        names = [n for n in dir(layers) if not n.startswith("_") and inspect.isclass(
            getattr(layers, n))]
        raise KernelMappingError(f"Layer `{layer_name}` not found in kernel repo {repo}.",
                                 hint=f"layers it defines: {', '.join(names) or 'none'}")
    return layer  # type: ignore[no-any-return]


def _resolved_revision(kernel: ModuleType) -> str | None:
    """The immutable revision the loader recorded for ``kernel``, when it tells."""
    from kernelkit.loader.api import get_loaded_kernels

    for loaded in get_loaded_kernels():
        if loaded.module is kernel and loaded.repo_info is not None:
            return str(loaded.repo_info.revision)
    return None


class LayerRepository:
    """A layer of a hub kernel: ``LayerRepository("org/name", layer_name="X", version=1)``.

    Exactly one of ``revision`` / ``version`` is required. Nothing is resolved or downloaded
    until ``load()``; the revision it resolved to is then remembered, so later loads of this
    repository use the same immutable revision.
    """

    def __init__(self, repo_id: str, *, layer_name: str, revision: str | None = None,
                 version: int | None = None, trust_remote_code: TrustArg = False) -> None:
        if revision is not None and version is not None:
            raise KernelMappingError("Either a revision or a version must be specified, not "
                                     f"both. (LayerRepository {repo_id!r}, layer {layer_name})")
        if revision is None and version is None:
            raise KernelMappingError("Either a revision or a version must be specified. "
                                     f"(LayerRepository {repo_id!r}, layer {layer_name})")
        self.repo_id = repo_id
        self.layer_name = layer_name
        self.revision = revision
        self.version = version
        self._trust = _frozen_trust(trust_remote_code)
        self._resolved: str | None = None

    def load(self) -> type[nn.Module]:
        from kernelkit.loader.api import get_kernel

        kernel = get_kernel(self.repo_id, revision=self._resolved or self.revision,
                            version=None if self._resolved else self.version,
                            trust_remote_code=_trust_arg(self._trust))
        self._resolved = self._resolved or _resolved_revision(kernel)
        return get_kernel_layer(self, kernel, self.layer_name)

    def _key(self) -> tuple[Any, ...]:
        return (self.layer_name, self.repo_id, self.revision, self.version, self._trust)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LayerRepository) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(("hub", *self._key()))

    def __str__(self) -> str:
        if self._resolved is not None:
            where = f"revision: {self._resolved}"
        elif self.revision is not None:
            where = f"revision: {self.revision}"
        else:
            where = f"version: {self.version}"
        return f"`{self.repo_id}` ({where}), layer `{self.layer_name}`"

    __repr__ = __str__


class LocalLayerRepository:
    """A layer of a kernel in a local directory (a build tree, its ``build/`` folder or one
    variant directory), loaded with ``get_local_kernel``."""

    def __init__(self, repo_path: Path | str, *, layer_name: str) -> None:
        self.repo_path = Path(repo_path)
        self.layer_name = layer_name

    def load(self) -> type[nn.Module]:
        from kernelkit.loader.api import get_local_kernel

        kernel = get_local_kernel(self.repo_path)
        return get_kernel_layer(self, kernel, self.layer_name)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, LocalLayerRepository) and self.layer_name == other.layer_name
                and self.repo_path == other.repo_path)

    def __hash__(self) -> int:
        return hash(("local", self.layer_name, self.repo_path))

    def __str__(self) -> str:
        return f"`{self.repo_path}` (layer `{self.layer_name}`)"

    __repr__ = __str__


class LockedLayerRepository:
    """A layer of a hub kernel pinned by a ``kernels.lock`` file.

    The lock is read when the repository is created: from ``lockfile`` (a file, or a directory
    holding one), or with ``None`` from the caller's project / installed distribution
    (``kernelkit.lock.discover``). ``load()`` loads exactly the locked commit and verifies
    the variant against the lock's hash (``kernelkit.lock.api.get_locked_kernel``). A locked
    pin was chosen by the project that wrote the lock, so no trust check is made;
    ``trust_remote_code`` is accepted for upstream compatibility.
    """

    def __init__(self, repo_id: str, *, lockfile: Path | str | None = None, layer_name: str,
                 trust_remote_code: TrustArg = False) -> None:
        self.repo_id = repo_id
        self.layer_name = layer_name
        self._trust = _frozen_trust(trust_remote_code)
        self.lockfile = _lockfile_path(lockfile)
        self.revision = locked_revision(repo_id, self.lockfile)

    def load(self) -> type[nn.Module]:
        from kernelkit.lock.api import get_locked_kernel

        kernel = get_locked_kernel(self.repo_id, lockfile=self.lockfile)
        return get_kernel_layer(self, kernel, self.layer_name)

    def _key(self) -> tuple[Any, ...]:
        return (self.layer_name, self.repo_id, self.revision, self.lockfile, self._trust)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LockedLayerRepository) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(("locked", *self._key()))

    def __str__(self) -> str:
        return f"`{self.repo_id}` (revision: {self.revision}), layer `{self.layer_name}`"

    __repr__ = __str__


def _lockfile_path(lockfile: Path | str | None) -> Path:
    from kernelkit.lock.discover import find_kernels_lock

    return find_kernels_lock(lockfile)


def locked_revision(repo_id: str, lockfile: Path) -> str:
    """The commit ``lockfile`` (``kernels.lock``, upstream-loader.md §3.3) pins ``repo_id`` to;
    ``KernelNotLockedError`` (a ``ValueError``) when it is not there."""
    from kernelkit.lock.api import locked_entry

    return locked_entry(repo_id, lockfile).sha
