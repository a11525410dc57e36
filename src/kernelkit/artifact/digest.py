"""Digests of a variant directory (upstream-builder.md §3.9).

kernelkit adds one key to upstream's ``digest`` object: ``"metadata"``, the digest of
``metadata.json``'s own content (its JSON object in canonical form, without this key), so the
digest covers everything that influences loading. Upstream readers ignore the extra key.

Every file of the variant (recursively; directory symlinks not followed) except the top-level
``metadata.json``/``metadata.json.sigstore``, anything under ``__pycache__`` and ``*.pyc`` is
hashed; the value is standard base64 (with padding) of the raw digest; keys are POSIX relative
paths sorted in byte order.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ALGORITHMS = ("sha256", "sha512")
_SKIP_TOP = {"metadata.json", "metadata.json.sigstore"}
_CHUNK = 1 << 20


def file_digest(path: Path, algorithm: str = "sha256") -> str:
    """base64 of the raw digest of the file's bytes, read in chunks."""
    h = hashlib.new(algorithm)
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
    return base64.b64encode(h.digest()).decode("ascii")


def bytes_digest(data: bytes, algorithm: str = "sha256") -> str:
    return base64.b64encode(hashlib.new(algorithm, data).digest()).decode("ascii")


def variant_files(variant_dir: Path) -> Iterator[tuple[str, Path]]:
    """Yield ``(relpath, path)`` for every file that the digest covers, sorted by relpath."""
    found: list[tuple[str, Path]] = []
    for dirpath, dirnames, filenames in os.walk(variant_dir, followlinks=False):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"
                       and not os.path.islink(os.path.join(dirpath, d))]
        for name in filenames:
            p = Path(dirpath) / name
            rel = p.relative_to(variant_dir).as_posix()
            if rel in _SKIP_TOP or name.endswith(".pyc") or not p.is_file():
                continue
            found.append((rel, p))
    found.sort(key=lambda t: t[0].encode("utf-8"))
    yield from found


@dataclass(frozen=True)
class Violation:
    kind: str  # algorithm-mismatch | missing-file | hash-mismatch | unknown-file
    path: str
    expected: str | None = None
    actual: str | None = None

    def __str__(self) -> str:
        if self.kind == "hash-mismatch":
            return (f"{self.path}: content does not match its digest "
                    f"(expected {self.expected}, got {self.actual})")
        if self.kind == "missing-file":
            return f"{self.path}: listed in the digest but missing"
        if self.kind == "unknown-file":
            return f"{self.path}: present but not listed in the digest"
        return f"digest algorithm mismatch: expected {self.expected}, got {self.actual}"


@dataclass(frozen=True)
class Digest:
    """``metadata.digest``: an algorithm and a map of relpath -> base64 digest."""

    algorithm: str = "sha256"
    files: dict[str, str] = field(default_factory=dict)
    metadata: str | None = None  # digest of metadata.json's content (see module docstring)

    @classmethod
    def of_variant(cls, variant_dir: Path, algorithm: str = "sha256") -> Digest:
        if algorithm not in ALGORITHMS:
            raise ValueError(f"unsupported digest algorithm {algorithm!r}")
        files = {rel: file_digest(p, algorithm) for rel, p in variant_files(variant_dir)}
        return cls(algorithm, files)

    @classmethod
    def from_json(cls, data: object) -> Digest:
        if not isinstance(data, dict) or data.get("algorithm") not in ALGORITHMS:
            raise ValueError(
                'digest must be {"algorithm": "sha256"|"sha512", "files": {...}}')
        files = data.get("files")
        if not isinstance(files, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in files.items()
        ):
            raise ValueError("digest.files must map relative paths to base64 strings")
        meta = data.get("metadata")
        if meta is not None and not isinstance(meta, str):
            raise ValueError("digest.metadata must be a base64 string")
        return cls(str(data["algorithm"]),
                   dict(sorted(files.items(), key=lambda t: t[0].encode())), meta)

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"algorithm": self.algorithm, "files": dict(self.files)}
        if self.metadata is not None:
            out["metadata"] = self.metadata
        return out

    def check_metadata(self, metadata_json: object) -> Violation | None:
        """Compare ``digest.metadata`` with the parsed ``metadata.json``; ``None`` when it
        matches or (a build by an older or upstream builder) there is no such key."""
        if self.metadata is None:
            return None
        actual = metadata_digest(metadata_json, self.algorithm)
        if actual != self.metadata:
            return Violation("hash-mismatch", "metadata.json", self.metadata, actual)
        return None

    def verify(self, variant_dir: Path) -> list[Violation]:
        """Compare against the files on disk; return every violation (empty list: all good)."""
        actual = Digest.of_variant(variant_dir, self.algorithm)
        out: list[Violation] = []
        for rel, expected in self.files.items():
            got = actual.files.get(rel)
            if got is None:
                out.append(Violation("missing-file", rel, expected))
            elif got != expected:
                out.append(Violation("hash-mismatch", rel, expected, got))
        out += [Violation("unknown-file", rel, None, got)
                for rel, got in actual.files.items() if rel not in self.files]
        return out


def metadata_digest(metadata_json: object, algorithm: str = "sha256") -> str:
    """Digest of a ``metadata.json`` object in canonical JSON (sorted keys, no spaces), leaving
    out ``digest.metadata`` itself."""
    data = dict(metadata_json) if isinstance(metadata_json, dict) else {}
    inner = data.get("digest")
    if isinstance(inner, dict):
        data["digest"] = {k: v for k, v in inner.items() if k != "metadata"}
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return bytes_digest(text.encode("utf-8", "surrogatepass"), algorithm)
