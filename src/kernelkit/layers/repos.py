"""Layer repositories: where ``kernelize`` gets a kernel layer class from.

Each repository is an immutable value (``__eq__``/``__hash__``) with ``load() -> type``; the
kernel is only downloaded/imported when ``kernelize`` first needs it. ``check_arch`` (default
on) is passed to the loader: a build whose ``backend.archs`` miss the current GPU is refused.
The function repositories (``FuncRepository`` & co, ``funcs.py``) load a kernel's
function instead of a layer.
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
                 version: int | None = None, trust_remote_code: TrustArg = False,
                 user_agent: str | dict[str, str] | None = None,
                 check_arch: bool = True) -> None:
        check_revision_or_version("LayerRepository", repo_id, layer_name, revision, version)
        self.repo_id = repo_id
        self.layer_name = layer_name
        self.revision = revision
        self.version = version
        self.check_arch = check_arch
        self._trust = _frozen_trust(trust_remote_code)
        self._resolved: str | None = None

    def load(self) -> type[nn.Module]:
        kernel = self._load_kernel()
        return get_kernel_layer(self, kernel, self.layer_name)

    def _load_kernel(self) -> ModuleType:
        from kernelkit.loader.api import get_kernel

        kernel = get_kernel(self.repo_id, revision=self._resolved or self.revision,
                            version=None if self._resolved else self.version,
                            trust_remote_code=_trust_arg(self._trust),
                            check_arch=self.check_arch)
        self._resolved = self._resolved or _resolved_revision(kernel)
        return kernel

    def _key(self) -> tuple[Any, ...]:
        return (self.layer_name, self.repo_id, self.revision, self.version, self._trust,
                self.check_arch)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._key() == other._key()

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

    def __init__(self, repo_path: Path | str, *, layer_name: str,
                 check_arch: bool = True) -> None:
        self.repo_path = Path(repo_path)
        self.layer_name = layer_name
        self.check_arch = check_arch

    def load(self) -> type[nn.Module]:
        return get_kernel_layer(self, self._load_kernel(), self.layer_name)

    def _load_kernel(self) -> ModuleType:
        from kernelkit.loader.api import get_local_kernel

        return get_local_kernel(self.repo_path, check_arch=self.check_arch)

    def __eq__(self, other: object) -> bool:
        return (type(other) is type(self) and self.layer_name == other.layer_name
                and self.repo_path == other.repo_path
                and self.check_arch == other.check_arch)

    def __hash__(self) -> int:
        return hash(("local", self.layer_name, self.repo_path, self.check_arch))

    def __str__(self) -> str:
        return f"`{self.repo_path}` (layer `{self.layer_name}`)"

    __repr__ = __str__


class LockedLayerRepository:
    """A layer of a hub kernel pinned by a ``kernels.lock`` file.

    The lock is read when the repository is created: from ``lockfile`` (a file, or a directory
    holding one), or with ``None`` from the caller's project / installed distribution
    (``kernelkit.lock.discover``). ``load()`` loads exactly the locked commit and verifies
    the variant against the lock's hash (``kernelkit.lock.api``). The repository pickles with
    the lock entries it read (as upstream 0.19), so a copy unpickled in another process (a
    ``torch.multiprocessing`` worker) loads the same commit without the file. A locked pin
    was chosen by the project that wrote the lock, so no trust check is made for it;
    ``trust_remote_code`` applies to unlocked kernel dependencies.
    """

    def __init__(self, repo_id: str, *, lockfile: Path | str | None = None, layer_name: str,
                 trust_remote_code: TrustArg = False, check_arch: bool = True) -> None:
        from kernelkit.lock.api import LockedSet

        self.repo_id = repo_id
        self.layer_name = layer_name
        self.check_arch = check_arch
        self._trust = _frozen_trust(trust_remote_code)
        self._locked = LockedSet.read(lockfile)
        self.lockfile = self._locked.path
        self.revision = self._locked.entry(repo_id).sha

    def load(self) -> type[nn.Module]:
        return get_kernel_layer(self, self._load_kernel(), self.layer_name)

    def _load_kernel(self) -> ModuleType:
        return load_locked_kernel(self.repo_id, self._locked, self.check_arch, self._trust)

    def _key(self) -> tuple[Any, ...]:
        return (self.layer_name, self.repo_id, self.revision, self.lockfile, self._trust,
                self.check_arch)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(("locked", *self._key()))

    def __str__(self) -> str:
        return f"`{self.repo_id}` (revision: {self.revision}), layer `{self.layer_name}`"

    __repr__ = __str__


def load_locked_kernel(repo_id: str, locked: Any, check_arch: bool,
                       trust: bool | tuple[str, ...]) -> ModuleType:
    """The kernel ``locked`` (a ``LockedSet``) pins ``repo_id`` to, as ``get_locked_kernel``
    loads it."""
    from kernelkit.lock.api import load_locked

    return load_locked(repo_id, locked, offline=False, check_arch=check_arch,
                       trust_remote_code=_trust_arg(trust))


def check_revision_or_version(kind: str, repo_id: str, name: str, revision: str | None,
                              version: int | None) -> None:
    """Exactly one of ``revision`` and ``version`` (as upstream's repositories require)."""
    if revision is not None and version is not None:
        raise KernelMappingError("Either a revision or a version must be specified, not "
                                 f"both. ({kind} {repo_id!r}, {name})")
    if revision is None and version is None:
        raise KernelMappingError("Either a revision or a version must be specified. "
                                 f"({kind} {repo_id!r}, {name})")


def locked_revision(repo_id: str, lockfile: Path) -> str:
    """The commit ``lockfile`` (``kernels.lock``, upstream-loader.md §3.3) pins ``repo_id`` to;
    ``KernelNotLockedError`` (a ``ValueError``) when it is not there."""
    from kernelkit.lock.api import locked_entry

    return locked_entry(repo_id, lockfile).sha
