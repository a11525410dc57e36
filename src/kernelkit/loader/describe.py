"""``describe-api``: a kernel's public functions and layers from its ``symbols.json``, without
importing (or downloading) the kernel.

For a local directory (a repository, its ``build/``, or one variant) the variant this machine
would load is chosen as ``get_local_kernel`` chooses it; for a hub repository as ``get_kernel``
does (``version``, ``revision``, else the newest major version ``v<N>``), and only that
variant's ``metadata.json`` and ``symbols.json`` are read (from the cache when present, offline
from the cache only). ``symbols.json`` must match its entry in the variant's digest, so what
is described is what the build sealed; a variant built before symbols existed says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kernelkit.artifact.digest import bytes_digest
from kernelkit.artifact.metadata import Metadata
from kernelkit.artifact.symbols import SYMBOLS_NAME, Symbols, parse_symbols
from kernelkit.errors import IntegrityError, OfflineError, SymbolsError
from kernelkit.variants.host import detect_system

if TYPE_CHECKING:
    from kernelkit.hub.port import Hub


@dataclass(frozen=True)
class ApiDescription:
    """What ``describe-api`` shows: the symbols and where they came from (``path`` for a local
    kernel; ``repo_id``, ``revision`` as asked and its ``commit`` for a hub kernel)."""

    symbols: Symbols
    variant: str
    path: Path | None = None
    repo_id: str | None = None
    revision: str | None = None
    commit: str | None = None

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = dict(self.symbols.to_json())
        if self.path is not None:
            out |= {"path": str(self.path), "variant": self.variant}
        else:
            out |= {"repo_id": self.repo_id, "revision": self.revision, "commit": self.commit,
                    "variant": self.variant}
        return out


def checked_symbols(symbols_raw: bytes | None, metadata_raw: bytes | None,
                    where: str) -> Symbols:
    """Parse ``symbols.json`` after checking it against the variant's digest."""
    if symbols_raw is None:
        raise SymbolsError(f"{where}/{SYMBOLS_NAME}",
                           "not found: the variant was built without one (kernelkit builds "
                           "and kernels >= 0.19 builds write it)")
    if metadata_raw is not None:
        meta = Metadata.loads(metadata_raw, f"{where}/metadata.json")
        expected = meta.digest.files.get(SYMBOLS_NAME) if meta.digest is not None else None
        if expected is not None:
            actual = bytes_digest(symbols_raw, meta.digest.algorithm if meta.digest else "sha256")
            if actual != expected:
                raise IntegrityError(f"{where}/{SYMBOLS_NAME}", expected, actual,
                                     hint="symbols.json does not match the variant's digest; "
                                     "the variant was changed after it was built")
    return parse_symbols(symbols_raw, f"{where}/{SYMBOLS_NAME}")


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def describe_local(path: Path, backend: str | None = None) -> ApiDescription:
    """The symbols of the variant of ``path`` this machine would load."""
    from kernelkit.loader.local import find_local_variant

    vdir = find_local_variant(Path(path), detect_system(backend))
    symbols = checked_symbols(_read(vdir / SYMBOLS_NAME), _read(vdir / "metadata.json"),
                              str(vdir))
    return ApiDescription(symbols, vdir.name, path=Path(path))


def describe_hub(repo_id: str, *, revision: str | None = None, version: int | str | None = None,
                 backend: str | None = None, hub: Hub | None = None,
                 cache_dir: Path | None = None) -> ApiDescription:
    """The symbols of ``repo_id``'s variant for this machine, at ``revision`` / ``version`` (the
    newest major version when neither is given)."""
    from kernelkit.loader.api import _no_variant
    from kernelkit.loader.install import LazyHub
    from kernelkit.loader.resolve import resolve_kernel
    from kernelkit.loader.settings import read_settings
    from kernelkit.variants.choose import best_variant, rank_variants

    # the loader's one resolve path: redirects followed, newest major version by default
    found = resolve_kernel(repo_id, revision=revision, version=version, hub=hub,
                           cache_dir=cache_dir, newest_by_default=True)
    settings = read_settings(cache_dir=cache_dir)
    lazy = LazyHub(hub, settings.open_hub)
    rc, commit, repo_id = found.cache, found.commit, found.repo_id
    system = detect_system(backend)
    decisions = rank_variants(found.variants, system)
    variant = best_variant(decisions)
    if variant is None:
        raise _no_variant(found, decisions, system)
    cached = rc.variant_dir(commit, variant)
    names = (SYMBOLS_NAME, "metadata.json")
    if (cached / "metadata.json").is_file():
        raw = [_read(cached / n) for n in names]
    elif settings.offline:
        raise OfflineError(f"{repo_id} ({commit[:12]}, {variant}) is not in the cache, and "
                           "offline mode is on", hint="load or download it once while online")
    else:
        raw = [lazy.get().read_file(repo_id, commit, f"build/{variant}/{n}") for n in names]
    symbols = checked_symbols(raw[0], raw[1], f"{repo_id}@{commit[:12]}/build/{variant}")
    return ApiDescription(symbols, variant, repo_id=repo_id, revision=found.asked,
                          commit=commit)

