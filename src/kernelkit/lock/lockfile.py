"""``kernels.lock``: read, merge and write (upstream-loader.md §3.3, the exact upstream format).

A JSON list of ``{"repo_id", "sha", "variants": {variant: {"hash", "hash_type"}}}``. kernelkit
writes it deterministically: entries sorted by ``repo_id``, variants by name, 2-space indent,
a trailing newline; a file whose content would not change is not touched at all.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kernelkit.errors import InputFileError, LockError
from kernelkit.loader.identity import is_repo_id, is_variant_name
from kernelkit.lock.hashing import HASH_PREFIX, HASH_TYPE
from kernelkit.util.fs import atomic_write_text, remove_stale_temp_files
from kernelkit.util.inputs import MAX_JSON_BYTES, parse_json, read_input, read_input_text

LOCK_NAME = "kernels.lock"
STALE_TEMP_AGE_S = 60.0
_SHA_RE = re.compile(r"^([0-9a-f]{40}|[0-9a-f]{64})\Z")
_HASH_RE = re.compile(r"^sha256-[0-9a-f]{64}\Z")


@dataclass(frozen=True)
class VariantLock:
    hash: str
    hash_type: str = HASH_TYPE


@dataclass(frozen=True)
class KernelLock:
    repo_id: str
    sha: str
    variants: dict[str, VariantLock] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "repo_id": self.repo_id,
            "sha": self.sha,
            "variants": {name: {"hash": v.hash, "hash_type": v.hash_type}
                         for name, v in sorted(self.variants.items())},
        }


def dumps_locks(locks: Iterable[KernelLock]) -> str:
    ordered = sorted(locks, key=lambda lock: lock.repo_id)
    return json.dumps([lock.to_json() for lock in ordered], indent=2) + "\n"


def parse_locks(text: str, source: Path | str = LOCK_NAME) -> list[KernelLock]:
    try:
        data = parse_json(text, source)
    except InputFileError as exc:
        raise LockError(exc.message, hint="regenerate it with `kernelkit lock <project>`") \
            from None
    if not isinstance(data, list):
        raise LockError(f"{source}: the top level must be a JSON list of locked kernels",
                        hint="regenerate it with `kernelkit lock <project>`")
    return [_parse_entry(entry, i, source) for i, entry in enumerate(data)]


def _parse_entry(entry: Any, index: int, source: Path | str) -> KernelLock:
    where = f"{source}: entry {index}"
    hint = "regenerate it with `kernelkit lock <project>`"
    if not isinstance(entry, dict):
        raise LockError(f"{where} must be an object", hint=hint)
    repo_id, sha, variants = entry.get("repo_id"), entry.get("sha"), entry.get("variants")
    if not is_repo_id(repo_id):
        raise LockError(f"{where}: 'repo_id' must be a string 'org/name' (letters, digits, "
                        "'.', '_', '-')", hint=hint)
    if not isinstance(sha, str) or not _SHA_RE.match(sha):
        raise LockError(f"{where} ({repo_id}): 'sha' must be a full commit id (40 or 64 hex)",
                        hint=hint)
    if not isinstance(variants, dict):
        raise LockError(f"{where} ({repo_id}): 'variants' must be an object", hint=hint)
    out: dict[str, VariantLock] = {}
    for name, v in variants.items():
        if not is_variant_name(name):
            raise LockError(f"{where} ({repo_id}): invalid variant name {name[:100]!r}",
                            hint=hint)
        if not isinstance(v, dict) or v.get("hash_type") != HASH_TYPE \
                or not isinstance(v.get("hash"), str) or not _HASH_RE.match(v["hash"]):
            raise LockError(
                f"{where} ({repo_id}): variant {name!r} must be "
                f'{{"hash": "{HASH_PREFIX}<64 hex>", "hash_type": "{HASH_TYPE}"}}', hint=hint)
        out[name] = VariantLock(v["hash"], v["hash_type"])
    return KernelLock(str(repo_id), sha, out)


def read_locks(path: Path) -> list[KernelLock]:
    try:
        text = read_input_text(path, MAX_JSON_BYTES)
    except (FileNotFoundError, NotADirectoryError):
        raise LockError(f"No kernels.lock file found: {path}",
                        hint="create it with `kernelkit lock <project>`") from None
    except InputFileError as exc:
        raise LockError(exc.message, hint="regenerate it with `kernelkit lock <project>`") \
            from None
    return parse_locks(text, path)


def lock_entry(locks: Iterable[KernelLock], repo_id: str) -> KernelLock | None:
    """The first entry for ``repo_id`` (upstream's lookup rule)."""
    return next((lock for lock in locks if lock.repo_id == repo_id), None)


def write_locks(path: Path, locks: Iterable[KernelLock]) -> bool:
    """Write ``path`` unless it already holds exactly this content; return whether it wrote."""
    text = dumps_locks(locks)
    try:
        if read_input(path, MAX_JSON_BYTES) == text.encode("utf-8"):
            return False
    except (FileNotFoundError, NotADirectoryError, InputFileError):
        pass
    # a writer killed mid-write left its temporary file; one older than a minute is no
    # concurrent writer's (there is no lock to hold: the rename keeps the file whole)
    remove_stale_temp_files(path, min_age_s=STALE_TEMP_AGE_S)
    atomic_write_text(path, text)
    return True
