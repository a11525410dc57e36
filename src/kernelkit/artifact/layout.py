"""The ``build/<variant>/`` layout: find variants, and seal a variant directory.

Variant discovery (upstream-builder.md §4.1), the one implementation every stage uses: the
first of ``<dir>/result``, ``<dir>/build``, ``<dir>`` that has variant directories; those
(sorted) are the variants. A variant directory is a non-hidden directory that holds a
``metadata.json`` or is named like a variant (``torch210-cxx11-cu128-x86_64-linux``; a fresh
checkout of a hub snapshot may lack the file). With ``include_self``, ``<dir>`` may itself be
one variant (it holds a ``metadata.json``, or is named like one and holds ``__init__.py``).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, replace
from pathlib import Path

from kernelkit.artifact.digest import Digest, metadata_digest
from kernelkit.artifact.metadata import Metadata
from kernelkit.artifact.symbols import write_symbols
from kernelkit.variants.name import is_variant_name


@dataclass(frozen=True)
class BuildTree:
    """A directory of variant directories (``build/``)."""

    root: Path
    variants: tuple[Path, ...]

    @property
    def names(self) -> list[str]:
        return [v.name for v in self.variants]


def is_variant_dir(path: Path) -> bool:
    """A directory that is one variant of a build tree (see the module docstring)."""
    return path.is_dir() and not path.name.startswith(".") and (
        (path / "metadata.json").is_file() or is_variant_name(path.name))


def _variant_dirs(base: Path) -> list[Path]:
    try:
        return sorted(p for p in base.iterdir() if is_variant_dir(p))
    except OSError:  # missing, or not a directory
        return []


def discover_variants(path: Path, *, include_self: bool = False) -> BuildTree | None:
    """Find the build tree at or under ``path``; ``None`` if there is none."""
    if include_self and ((path / "metadata.json").is_file()
                         or (is_variant_name(path.name) and (path / "__init__.py").exists())):
        return BuildTree(path.parent, (path,))
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
    """Remove bytecode, write ``symbols.json`` (so the digest covers it), compute the digest
    of the variant's files, write ``metadata.json``."""
    remove_bytecode(variant_dir)
    write_symbols(variant_dir, metadata.build_layout, metadata.id)
    sealed = metadata.with_digest(Digest.of_variant(variant_dir, algorithm))
    assert sealed.digest is not None
    own = metadata_digest(sealed.to_json(), algorithm)
    sealed = sealed.with_digest(replace(sealed.digest, metadata=own))
    sealed.write(variant_dir / "metadata.json")
    return sealed
