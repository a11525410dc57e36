"""The build cache: skip a variant whose inputs did not change since its last successful build.

The key hashes the sources (every file the manifest references, build.toml, the torch-ext
package), the toolchain (lock entry digest + the environment's installed distributions + the
CUDA toolkit), the kernelkit version and the CUDA capabilities. Keys of successful builds are
kept in ``<out_root>/.kernelkit-cache.json`` (and in each variant's metadata provenance).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kernelkit._version import __version__
from kernelkit.manifest.model import Manifest, TorchFramework, TvmFfi
from kernelkit.util.fs import atomic_write_text, file_lock

CACHE_FILE = ".kernelkit-cache.json"


def source_files(manifest: Manifest, backend: str | None = None) -> list[Path]:
    """Every file a build of ``backend`` (default: any) reads: build.toml, [torch] src/include,
    the src/include of that backend's kernels, and the ``torch-ext/<python_name>/`` package
    (``tvm-ffi-ext/`` for a ``[tvm-ffi]`` kernel)."""
    root = manifest.root.resolve()
    rels: list[str] = ["build.toml"]
    fw = manifest.framework
    if isinstance(fw, (TorchFramework, TvmFfi)):
        rels += [*fw.src, *fw.include]
    for k in manifest.kernels:
        if backend is not None and k.backend != backend:
            continue
        rels += [*k.src, *k.include]
    ext_dir = "tvm-ffi-ext" if isinstance(fw, TvmFfi) else "torch-ext"
    rels.append(f"{ext_dir}/{manifest.general.python_name}")
    files: set[Path] = set()
    for rel in rels:
        path = root / rel
        if path.is_dir():
            files.update(p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
        elif path.is_file():
            files.add(path)
    return sorted(files)


def source_digest(manifest: Manifest, backend: str | None = None) -> str:
    root = manifest.root.resolve()
    h = hashlib.sha256()
    for path in source_files(manifest, backend):
        h.update(f"{path.relative_to(root).as_posix()}\0".encode())
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return "sha256:" + h.hexdigest()


def cache_key(*, sources: str, toolchain: str, capabilities: Sequence[str] | None,
              variant: str) -> str:
    text = json.dumps({"sources": sources, "toolchain": toolchain, "kernelkit": __version__,
                       "capabilities": list(capabilities or []), "variant": variant},
                      sort_keys=True)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def read_cache(out_root: Path) -> dict[str, str]:
    try:
        data = json.loads((out_root / CACHE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.get("variants", {}).items() if isinstance(v, str)}


def _read_record(out_root: Path) -> dict[str, Any]:
    try:
        data = json.loads((out_root / CACHE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def record_cache(out_root: Path, variant: str, key: str,
                 unit_times: Mapping[str, float] | None = None) -> None:
    """Record ``variant``'s cache key (and the seconds each translation unit took, when it
    was compiled: the build's timing record, kept out of the sealed, reproducible tree)."""
    with file_lock(out_root / f"{CACHE_FILE}.lock"):
        current = read_cache(out_root)
        current[variant] = key
        times = _read_record(out_root).get("unit-seconds", {})
        times = times if isinstance(times, dict) else {}
        if unit_times:
            times[variant] = dict(unit_times)
        atomic_write_text(out_root / CACHE_FILE, json.dumps(
            {"kernelkit": __version__, "variants": dict(sorted(current.items())),
             "unit-seconds": dict(sorted(times.items()))}, indent=2) + "\n")


@dataclass(frozen=True)
class BuildCache:
    """The build cache of one output root, for one variant's sources and CUDA capabilities."""

    out_root: Path
    sources: str
    capabilities: tuple[str, ...] | None = None

    def key(self, variant: str, toolchain: str) -> str:
        return cache_key(sources=self.sources, toolchain=toolchain,
                         capabilities=self.capabilities, variant=variant)

    def is_fresh(self, variant: str, key: str) -> bool:
        """Was ``variant`` last built with ``key``, and is that build still in place?"""
        return (read_cache(self.out_root).get(variant) == key
                and (self.out_root / variant / "metadata.json").is_file())

    def record(self, variant: str, key: str,
               unit_times: Mapping[str, float] | None = None) -> None:
        record_cache(self.out_root, variant, key, unit_times)
