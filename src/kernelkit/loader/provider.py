"""The loader's one hook for a variant it cannot download: a :class:`VariantProvider`.

When no published variant of the resolved commit fits this machine, ``get_kernel`` &
friends raise ``VariantNotFoundError``, unless the caller passed a provider: then the provider
gets a :class:`MissingVariant` (what was resolved, every published variant with why it was
rejected, this machine, the hub) and returns the directory of a verified variant for this
machine, or raises. The loader imports that directory as it imports a download.

The loader never imports the builder (``pyproject.toml``'s import contracts), so the provider
that builds from the published sources lives above both (``kernelkit.source_build``) and is
passed in by the public entry points there: ``kernelkit.get_kernel(..., build_missing=True)``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, Protocol

if TYPE_CHECKING:
    from kernelkit.loader.install import LazyHub
    from kernelkit.loader.resolve import Resolved
    from kernelkit.loader.settings import Settings
    from kernelkit.variants.choose import Decision
    from kernelkit.variants.host import System

LOCAL_DIR = "local"  # <commit>/local/<variant>: built here (``RepoCache.local_variant_dir``)


class MissingVariant(NamedTuple):
    """What the loader knows when no published variant fits. ``pinned_sources``: the sources
    digest a lock file pins for this commit (a locked load may build from those bytes only);
    ``None`` for an unlocked load."""

    resolved: Resolved
    decisions: list[Decision]
    system: System
    hub: LazyHub
    settings: Settings
    offline: bool
    locked: bool = False
    pinned_sources: str | None = None


class VariantProvider(Protocol):
    """Supplies a variant that no published one could: ``provide`` returns the directory of a
    verified variant for ``missing.system`` (in the cache), or raises a ``KernelkitError`` that
    says why it cannot."""

    def provide(self, missing: MissingVariant) -> Path: ...


def is_built_locally(variant_dir: Path) -> bool:
    """Whether ``variant_dir`` is a variant built here (``<commit>/local/<variant>``), not a
    download (``<commit>/build/<variant>``)."""
    return variant_dir.parent.name == LOCAL_DIR
