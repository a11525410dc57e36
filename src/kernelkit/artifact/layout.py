"""The ``build/<variant>/`` layout: find variants, and seal a variant directory.

Variant discovery (upstream-builder.md §4.1): the first of ``<dir>/result``, ``<dir>/build``,
``<dir>`` that has sub-directories holding a ``metadata.json``; those (sorted) are the variants.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, replace
from pathlib import Path

from kernelkit.artifact.digest import Digest, metadata_digest
from kernelkit.artifact.metadata import Metadata


@dataclass(frozen=True)
class BuildTree:
    """A directory of variant directories (``build/``)."""

    root: Path
    variants: tuple[Path, ...]

    @property
    def names(self) -> list[str]:
        return [v.name for v in self.variants]


def _variant_dirs(base: Path) -> list[Path]:
    if not base.is_dir():
        return []
    return sorted(p for p in base.iterdir() if p.is_dir() and (p / "metadata.json").is_file())


def discover_variants(path: Path) -> BuildTree | None:
    """Find the build tree at or under ``path``; ``None`` if there is none."""
    for base in (path / "result", path / "build", path):
        found = _variant_dirs(base)
        if found:
            return BuildTree(base, tuple(found))
    return None


def remove_bytecode(variant_dir: Path) -> None:
    for cache in list(variant_dir.rglob("__pycache__")):
        shutil.rmtree(cache, ignore_errors=True)
    for pyc in list(variant_dir.rglob("*.pyc")):
        pyc.unlink(missing_ok=True)


def seal_variant(variant_dir: Path, metadata: Metadata, algorithm: str = "sha256") -> Metadata:
    """Remove bytecode, compute the digest of the variant's files, write ``metadata.json``."""
    remove_bytecode(variant_dir)
    sealed = metadata.with_digest(Digest.of_variant(variant_dir, algorithm))
    assert sealed.digest is not None
    own = metadata_digest(sealed.to_json(), algorithm)
    sealed = sealed.with_digest(replace(sealed.digest, metadata=own))
    sealed.write(variant_dir / "metadata.json")
    return sealed
