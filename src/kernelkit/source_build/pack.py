"""The sources ``kernelkit upload`` publishes: what a build of the project reads, archived.

The files are the builder's own list of what a build reads (``build_cache.source_files``:
``build.toml``, every kernel's and the framework's sources and includes, the ``torch-ext``
package), the same list whose digest each variant records at build time
(``builder.provenance.sources_record``), so the archive's digest is the one the variants
name when the project did not change since they were built.
"""

from __future__ import annotations

from pathlib import Path

from kernelkit.artifact.layout import discover_variants
from kernelkit.artifact.sources import SourceArchive, write_archive


def find_project(path: Path) -> Path | None:
    """The project (the directory with ``build.toml``) of ``path``: a project, its build
    tree, or a directory beside it (``kernelkit upload``'s rule)."""
    tree = discover_variants(path)
    candidates = [path, *([tree.root.parent] if tree else []), path.parent]
    return next((c for c in candidates if (c / "build.toml").is_file()), None)


def pack_project(path: Path, dest_dir: Path) -> SourceArchive | None:
    """Write the sources archive of the project of ``path`` into ``dest_dir``; ``None`` when
    ``path`` belongs to no project (a bare build tree: nothing to publish)."""
    from kernelkit.builder.caches.build_cache import source_files
    from kernelkit.manifest import load_manifest

    project = find_project(Path(path))
    if project is None:
        return None
    manifest = load_manifest(project.resolve())
    return write_archive(manifest.root, source_files(manifest), dest_dir)


def pack_for_upload(path: Path, dest_dir: Path) -> tuple[SourceArchive | None, str | None]:
    """:func:`pack_project` for ``kernelkit upload``, which never fails for its sources:
    ``(None, None)`` when no variant under ``path`` records sources (builds of another builder
    or an older kernelkit: nothing could use them); ``(None, why)`` when the project cannot be
    packed now (its ``build.toml`` no longer loads)."""
    from kernelkit.artifact.metadata import Metadata
    from kernelkit.artifact.sources import record_of
    from kernelkit.errors import KernelkitError

    tree = discover_variants(Path(path))
    try:
        metas = [Metadata.read(v / "metadata.json") for v in tree.variants] if tree else []
    except KernelkitError:
        return None, None  # the upload itself says what is wrong with the variants
    if not any(m.provenance is not None and record_of(m.provenance.extra) for m in metas):
        return None, None
    try:
        return pack_project(path, dest_dir), None
    except (KernelkitError, OSError) as exc:
        reason = exc.message if isinstance(exc, KernelkitError) else str(exc)
        return None, f"the sources were not published: {reason.splitlines()[0]}"
