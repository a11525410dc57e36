"""``update_build``: rewrite an edition-3/4 ``build.toml`` as edition 5 (upstream spec §1.5).

The file is read with the rules of its own edition into the edition-5 model and written back
whole (comments and key order are not kept, as upstream). v4 -> v5 adds ``edition = 5`` and
keeps a single ``stable-abi`` string; v3 -> v5 also needs ``license`` (an error if missing),
defaults ``version`` to 1 and turns a missing framework table into an empty ``[torch-noarch]``.
"""

from __future__ import annotations

from pathlib import Path

from kernelkit.manifest.dump import dump_manifest
from kernelkit.manifest.model import CURRENT_EDITION
from kernelkit.manifest.parse import manifest_path, read_manifest, read_text
from kernelkit.util.fs import atomic_write_text


def update_build(kernel_dir: Path) -> bool:
    """Rewrite ``<kernel_dir>/build.toml`` as edition 5; ``False`` if it already was."""
    path = manifest_path(kernel_dir)
    manifest = read_manifest(read_text(path), path, path.parent, check_sources=False)
    if manifest.source_edition == CURRENT_EDITION:
        return False
    atomic_write_text(path, dump_manifest(manifest))
    return True
