"""Kernel dependencies (``metadata.json`` ``kernel-depends``) and ``get_kernel_dep``.

A kernel may depend on other hub kernels (``kernel-depends = [{ repo-id = "org/x", version =
1 }]`` in build.toml). The loader loads them, depth first, before the kernel itself runs; while
the kernel's ``__init__`` executes, ``kernelkit.get_kernel_dep("org/x")`` returns the loaded
dependency (as upstream's ``kernels.get_kernel_dep``, which reads upstream's own loading state:
a kernel loaded by kernelkit calls ``kernelkit.get_kernel_dep``). A dependency cycle is refused.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from kernelkit.artifact.metadata import Metadata
from kernelkit.errors import KernelDepCycleError, KernelDepError, MetadataError

# ``None``: not inside a kernel's import; else the dependencies of the kernel being imported
_DEPS: ContextVar[dict[str, ModuleType] | None] = ContextVar("kernelkit_kernel_deps",
                                                              default=None)
# the repositories whose dependencies are being loaded, outermost first (cycle detection)
_CHAIN: ContextVar[tuple[str, ...]] = ContextVar("kernelkit_kernel_dep_chain", default=())


@dataclass(frozen=True)
class KernelDep:
    """One ``kernel-depends`` entry: exactly one of ``version`` and ``revision``."""

    repo_id: str
    version: int | None = None
    revision: str | None = None

    def describe(self) -> str:
        which = f"revision: {self.revision}" if self.revision else f"version: {self.version}"
        return f"{self.repo_id} ({which})"


def kernel_dependencies(metadata: Metadata,
                        source: Path | str = "metadata.json") -> list[KernelDep]:
    """The ``kernel-depends`` entries of ``metadata`` (``MetadataError`` for a malformed one)."""
    out = []
    for i, entry in enumerate(metadata.kernel_depends):
        repo_id, version, revision = (entry.get("repo-id"), entry.get("version"),
                                      entry.get("revision"))
        where = f"kernel-depends[{i}]"
        if not isinstance(repo_id, str):
            raise MetadataError(source, f"{where}: 'repo-id' must be a string")
        if (version is None) == (revision is None):
            raise MetadataError(source, f"{where}: exactly one of 'version' and 'revision' "
                                        "must be given")
        if version is not None and (not isinstance(version, int) or isinstance(version, bool)):
            raise MetadataError(source, f"{where}: 'version' must be an integer")
        if revision is not None and not isinstance(revision, str):
            raise MetadataError(source, f"{where}: 'revision' must be a string")
        out.append(KernelDep(repo_id, version, revision))
    return out


def load_dependencies(root: str, deps: list[KernelDep],
                      load: Callable[[KernelDep], ModuleType]) -> dict[str, ModuleType]:
    """Load each dependency of ``root`` with ``load`` (which loads the dependency's own
    dependencies the same way); ``KernelDepCycleError`` on a cycle."""
    chain = _CHAIN.get()
    token = _CHAIN.set((*chain, root))
    try:
        out = {}
        for dep in deps:
            if dep.repo_id in (*chain, root):
                cycle = " -> ".join((*chain, root, dep.repo_id))
                raise KernelDepCycleError(
                    f"Cyclic kernel dependency detected: {dep.repo_id} ({cycle})",
                    hint="a kernel cannot depend on itself, directly or through others")
            out[dep.repo_id] = load(dep)
        return out
    finally:
        _CHAIN.reset(token)


@contextmanager
def providing(deps: dict[str, ModuleType]) -> Iterator[None]:
    """Make ``deps`` what :func:`get_kernel_dep` returns, for the ``with`` block."""
    token = _DEPS.set(deps)
    try:
        yield
    finally:
        _DEPS.reset(token)


def get_kernel_dep(repo_id: str) -> ModuleType:
    """The loaded dependency ``repo_id`` of the kernel being imported. Call it from a kernel's
    code while it is loaded (its ``__init__`` or a module it imports); the version or revision
    comes from the kernel's ``metadata.json`` (``kernel-depends`` in build.toml)."""
    deps = _DEPS.get()
    if deps is None:
        raise KernelDepError(
            "`get_kernel_dep` only works during kernel loading",
            hint="call it at import time of the kernel (in its __init__.py), not later")
    module = deps.get(repo_id)
    if module is None:
        raise KernelDepError(
            f"Dependency '{repo_id}' not found in kernel dependencies",
            hint="add it to `kernel-depends` in build.toml and rebuild the kernel")
    return module
