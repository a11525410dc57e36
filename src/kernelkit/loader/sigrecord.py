"""The hub's signature file of a downloaded variant, kept beside it in the cache
(``build/.<variant>.kksig``; empty: the hub had none at that commit), so offline loads know
what was published. Written by the download (``loader/install.py``) before its receipt; read
by ``loader/signatures.py``, which applies the trust policy. Apart from that module so the
download does not import the policy's use cases (and they can use the download)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from kernelkit.loader.owned import write_owned

if TYPE_CHECKING:
    from kernelkit.hub.port import Hub


def record_path(variant_dir: Path) -> Path:
    """Where the cache keeps the hub's signature file of ``variant_dir``."""
    return variant_dir.parent / f".{variant_dir.name}.kksig"


def record_signature(hub: Hub, repo_id: str, commit: str, variant_dir: Path) -> None:
    """Fetch ``build/<variant>.kksig`` at ``commit`` and keep it beside the variant (at most
    one byte more than a signature file may have: a larger one is refused when read)."""
    from kernelkit.signing.sigfile import MAX_SIGFILE_BYTES, hub_path

    raw = hub.read_file(repo_id, commit, hub_path(variant_dir.name))
    write_owned(record_path(variant_dir), (raw or b"")[:MAX_SIGFILE_BYTES + 1])
