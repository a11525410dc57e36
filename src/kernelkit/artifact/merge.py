"""Merge build trees built on several machines (shards) into one ``build/``.

Each shard is a build tree (``<shard>/build/<variant>/``, ``<shard>/result/<variant>/`` or
``<shard>/<variant>/``, see :func:`~kernelkit.artifact.layout.discover_variants`). Every variant
is re-verified against the digest in its ``metadata.json`` before anything is written; a
variant found in two shards must be identical in both (same ``metadata.json``, hence the same
file digests), otherwise the merge is refused and both shards are named. The merged tree is
assembled in a temporary sibling of the output, verified again, then renamed into place: a
failed merge leaves the output as it was.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from kernelkit.artifact.layout import discover_variants
from kernelkit.artifact.metadata import Metadata
from kernelkit.errors import MergeError
from kernelkit.util.fs import replace_dir, temp_sibling

_SHOWN_VIOLATIONS = 5


@dataclass(frozen=True)
class ShardVariant:
    """One variant directory of one shard, with its verified metadata."""

    name: str
    path: Path
    shard: Path
    metadata: Metadata


@dataclass(frozen=True)
class MergeResult:
    """What was merged: every variant, and the shards it was found in (first one copied)."""

    out: Path
    variants: dict[str, tuple[Path, ...]]


def read_shard(shard: Path) -> list[ShardVariant]:
    """The variants of one shard, each verified against its digest."""
    tree = discover_variants(shard)
    if tree is None:
        raise MergeError(f"{shard}: no variants found (expected <variant>/metadata.json "
                         "directly there or under build/ or result/)", shards=[shard],
                         hint="pass the build/ directory (or the downloaded artifact) of a shard")
    return [verified_variant(vdir, shard) for vdir in tree.variants]


def verified_variant(vdir: Path, shard: Path) -> ShardVariant:
    meta = Metadata.read(vdir / "metadata.json")
    if meta.digest is None:
        raise MergeError(f"{vdir}: metadata.json has no digest", variant=vdir.name,
                         shards=[shard], hint="rebuild the variant with `kernelkit build`")
    violations = meta.digest.verify(vdir)
    if violations:
        shown = "; ".join(str(v) for v in violations[:_SHOWN_VIOLATIONS])
        more = len(violations) - _SHOWN_VIOLATIONS
        shown += f"; and {more} more" if more > 0 else ""
        raise MergeError(f"{vdir}: the files do not match the variant's digest: {shown}",
                         variant=vdir.name, shards=[shard],
                         hint="the shard is corrupt or was modified after the build; rebuild it")
    return ShardVariant(vdir.name, vdir, shard, meta)


def plan_merge(shards: Sequence[Path]) -> dict[str, list[ShardVariant]]:
    """Read and verify every shard; group the variants by name, refusing conflicts."""
    if not shards:
        raise MergeError("no shards to merge", hint="pass one or more shard build directories")
    found: dict[str, list[ShardVariant]] = {}
    for shard in shards:
        for sv in read_shard(shard):
            copies = found.setdefault(sv.name, [])
            if copies and copies[0].metadata != sv.metadata:
                raise conflict(copies[0], sv)
            copies.append(sv)
    return dict(sorted(found.items()))


def conflict(first: ShardVariant, second: ShardVariant) -> MergeError:
    a, b = first.metadata, second.metadata
    fa = a.digest.files if a.digest else {}
    fb = b.digest.files if b.digest else {}
    differ = sorted(p for p in fa.keys() | fb.keys() if fa.get(p) != fb.get(p))
    what = f"files differ: {', '.join(differ[:_SHOWN_VIOLATIONS])}" if differ \
        else "metadata.json differs"
    return MergeError(
        f"variant {first.name} is in {first.shard} and in {second.shard} with different "
        f"content ({what})", variant=first.name, shards=[first.shard, second.shard],
        hint="each variant must be built by one shard; rebuild the shards from one commit "
             "and toolchain, or drop one of them")


def merge_build_trees(out: Path, shards: Sequence[Path], *, replace: bool = False) -> MergeResult:
    """Assemble ``out`` (a build tree) from the variants of ``shards``.

    ``out`` must not exist or be empty, unless ``replace`` is set (then it is replaced as a
    whole). Raises :class:`MergeError` for missing variants, digest mismatches and conflicts.
    """
    if out.exists() and any(out.iterdir()) and not replace:
        raise MergeError(f"{out}: already exists and is not empty", shards=(),
                         hint="merge into a new directory, or pass --force to replace it")
    plan = plan_merge(shards)
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = temp_sibling(out, "merge")
    try:
        staging.mkdir()
        for name, copies in plan.items():
            dest = staging / name
            shutil.copytree(copies[0].path, dest, symlinks=True,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            verified_variant(dest, copies[0].shard)
        replace_dir(staging, out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return MergeResult(out, {n: tuple(c.shard for c in cs) for n, cs in plan.items()})
