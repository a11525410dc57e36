"""Kernels from local directories: ``get_local_kernel`` layouts and ``LOCAL_KERNELS``.

Accepted layouts (upstream ``test_local_kernel_path_types``): a repository/snapshot root whose
``build/`` holds variants, a ``build/`` directory itself, or one variant directory.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

from kernelkit.artifact.layout import discover_variants
from kernelkit.errors import (
    KernelNotFoundError,
    LocalKernelsError,
    Rejection,
    VariantNotFoundError,
)
from kernelkit.variants.choose import Decision, best_variant, rank_variants
from kernelkit.variants.host import System


@functools.lru_cache(maxsize=8)
def parse_local_kernels(value: str) -> dict[str, Path]:
    """``repo_id=path[:repo_id=path...]`` -> ``{repo_id: path}`` (later entries win)."""
    out: dict[str, Path] = {}
    for entry in value.split(":"):
        if "=" not in entry:
            raise LocalKernelsError(
                f"Invalid LOCAL_KERNELS entry: {entry}. Expected format: "
                "repo_id_1=path_1:repo_id_2=path_2",
            )
        repo_id, path = entry.split("=", 1)
        out[repo_id] = Path(path)
    return out


def find_local_variant(repo_path: Path, system: System) -> Path:
    """The variant directory to import from ``repo_path`` (any of the three layouts)."""
    repo_path = Path(os.path.abspath(repo_path))
    tree = discover_variants(repo_path)
    if tree is not None:
        decisions = rank_variants(tree.names, system)
        best = best_variant(decisions)
        if best is None:
            raise VariantNotFoundError(str(repo_path), None, _rejections(decisions),
                                       system=system.describe())
        return tree.root / best
    if (repo_path / "metadata.json").is_file():
        return repo_path  # a variant directory itself
    raise KernelNotFoundError(
        f"Could not find kernel in {repo_path}",
        hint="point at a kernel repository, its build/ directory, or one variant directory "
             "(a directory with metadata.json)",
    )


def _rejections(decisions: list[Decision]) -> list[Rejection]:
    return [Rejection(d.variant, d.reason) for d in decisions if not d.accepted]
