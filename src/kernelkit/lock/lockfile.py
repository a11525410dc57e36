"""``kernels.lock`` and kernelkit's hash sidecar ``kernels.lock.hashes``: read, write.

``kernels.lock`` is the file upstream ``kernels`` (0.17 and later) reads and writes: a JSON list
of ``{"dependency": {"repo-id", "version" | "revision"}, "lock": {"commit"}}``, kebab-case.
Upstream's reader rejects any field it does not know, so kernelkit writes exactly this and reads
it as strictly (a file kernelkit accepts, upstream accepts), the same bytes upstream's
``kernels lock`` writes: entries sorted by dependency, 2-space indentation, no final newline.

What kernelkit adds, the lock hash of every variant of each locked commit (``git_lfs_concat``,
verified after download and before each locked load), lives beside it in
``kernels.lock.hashes``, which upstream never reads::

    {"kernelkit-lock-hashes": 1,
     "kernels": {"org/name": {"commit": "<40 hex>",
                              "sources": "sha256:<64 hex>",
                              "variants": {"<variant>": {"hash": "sha256-<64 hex>",
                                                         "hash_type": "git_lfs_concat",
                                                         "signer": "ed25519:SHA256:..."}}}}}

``signer`` (only for a variant that was signed when locked) is the identity whose signature
was verified then; every locked load requires a valid signature by it (``kernelkit.signing``).

``sources`` (optional) is the digest of the sources the commit's builds record and publish
(``kernelkit.artifact.sources``): a locked load that builds a missing variant from source
(``build_missing``) builds from exactly those bytes, and refuses without it.

A sidecar entry applies only to the commit it names: after upstream re-locks a kernel to another
commit, its stale hashes are ignored, and that kernel is pinned by commit plus the digest in each
variant's ``metadata.json`` (checked on every download), as a lock file without a sidecar is.

kernelkit's previous format (``[{"repo_id", "sha", "variants": {...}}]``, which no upstream
release reads) is still read, hashes included; :attr:`LockFile.legacy` says so, and
``kernelkit lock`` rewrites it as the two files above.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kernelkit.artifact.sources import is_digest
from kernelkit.errors import InputFileError, LockError
from kernelkit.loader.identity import is_repo_id, is_variant_name
from kernelkit.lock.hashing import HASH_PREFIX, HASH_TYPE
from kernelkit.signing.policy import is_identity
from kernelkit.util.fs import atomic_write_text, remove_stale_temp_files
from kernelkit.util.inputs import MAX_JSON_BYTES, parse_json, read_input, read_input_text

LOCK_NAME = "kernels.lock"
STALE_TEMP_AGE_S = 60.0
HASHES_SUFFIX = ".hashes"
HASHES_FORMAT = 1
_SHA_RE = re.compile(r"^([0-9a-f]{40}|[0-9a-f]{64})\Z")
_HASH_RE = re.compile(r"^sha256-[0-9a-f]{64}\Z")
_HINT = "regenerate it with `kernelkit lock <project>` (or upstream's `kernels lock`)"
REWRITE_HINT = ("rewrite it in the format both tools read with `kernelkit lock <project>` "
                "(kernelkit keeps its variant hashes in kernels.lock.hashes)")


@dataclass(frozen=True)
class VariantLock:
    hash: str
    hash_type: str = HASH_TYPE
    #: the identity that signed the variant when it was locked (a key fingerprint
    #: ``ed25519:SHA256:...`` or ``sigstore:<workflow URI>``), verified on every locked load
    signer: str | None = None

    def to_json(self) -> dict[str, str]:
        out = {"hash": self.hash, "hash_type": self.hash_type}
        if self.signer is not None:
            out["signer"] = self.signer
        return out


@dataclass(frozen=True)
class KernelLock:
    """One locked kernel: ``repo_id`` pinned to commit ``sha``. ``version`` / ``revision`` is
    the dependency as upstream records it (one of them); ``variants`` holds kernelkit's lock
    hashes of that commit, empty when none are known (an upstream-written lock)."""

    repo_id: str
    sha: str
    variants: dict[str, VariantLock] = field(default_factory=dict)
    version: int | None = None
    revision: str | None = None
    #: the digest of the commit's published sources (sidecar only); ``None``: not recorded
    sources: str | None = None

    @property
    def commit(self) -> str:
        return self.sha

    def to_json(self) -> dict[str, Any]:
        """The ``kernels.lock`` entry (no hashes: they go to the sidecar)."""
        dep: dict[str, Any] = {"repo-id": self.repo_id}
        if self.version is not None:
            dep["version"] = self.version
        else:  # no dependency recorded (kernelkit's previous format): the commit itself
            dep["revision"] = self.revision if self.revision is not None else self.sha
        return {"dependency": dep, "lock": {"commit": self.sha}}

    def hashes_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"commit": self.sha}
        if self.sources is not None:
            out["sources"] = self.sources
        out["variants"] = {name: v.to_json() for name, v in sorted(self.variants.items())}
        return out


@dataclass(frozen=True)
class LockFile:
    """A read ``kernels.lock``: its entries, whether it is kernelkit's previous format, and
    the sidecar it was merged with (``None``: none applied)."""

    path: Path
    locks: list[KernelLock]
    legacy: bool = False
    hashes_path: Path | None = None


def hashes_path(lock_path: Path) -> Path:
    """``kernels.lock.hashes`` beside ``lock_path``."""
    return lock_path.with_name(lock_path.name + HASHES_SUFFIX)


def _sort_key(lock: KernelLock) -> tuple[str, int, str]:
    """Upstream's order: by repo id, then a version dependency before a revision one."""
    if lock.version is not None:
        return (lock.repo_id, 0, f"{lock.version:020d}")
    return (lock.repo_id, 1, lock.revision if lock.revision is not None else lock.sha)


def dumps_locks(locks: Iterable[KernelLock]) -> str:
    """``kernels.lock`` text, as upstream's ``kernels lock`` writes it."""
    return json.dumps([lock.to_json() for lock in sorted(locks, key=_sort_key)], indent=2)


def dumps_hashes(locks: Iterable[KernelLock]) -> str:
    """``kernels.lock.hashes`` text for the entries that carry hashes."""
    kernels = {lock.repo_id: lock.hashes_json()
               for lock in sorted(locks, key=_sort_key, reverse=True)
               if lock.variants or lock.sources}
    return json.dumps({"kernelkit-lock-hashes": HASHES_FORMAT,
                       "kernels": dict(sorted(kernels.items()))}, indent=2) + "\n"


# --- parsing ----------------------------------------------------------------------------------


def _load_json(text: str, source: Path | str) -> Any:
    try:
        return parse_json(text, source)  # every parse failure, huge numbers included
    except InputFileError as exc:
        raise LockError(exc.message, hint=_HINT) from None


def parse_lock_file(text: str, source: Path | str = LOCK_NAME) -> tuple[list[KernelLock], bool]:
    """The entries of a ``kernels.lock`` text and whether it is kernelkit's previous format."""
    data = _load_json(text, source)
    if not isinstance(data, list):
        raise LockError(f"{source}: the top level must be a JSON list of locked kernels",
                        hint=_HINT)
    legacy = bool(data) and all(isinstance(e, dict) and "repo_id" in e for e in data)
    parse = _parse_legacy_entry if legacy else _parse_entry
    locks = [parse(entry, i, source) for i, entry in enumerate(data)]
    seen: set[tuple[str, int, str]] = set()
    for lock in locks:
        if _sort_key(lock) in seen:
            raise LockError(f"{source}: {lock.repo_id} is locked twice for the same "
                            "dependency", hint=_HINT)
        seen.add(_sort_key(lock))
    return locks, legacy


def parse_locks(text: str, source: Path | str = LOCK_NAME) -> list[KernelLock]:
    return parse_lock_file(text, source)[0]


def _exact_keys(obj: Any, allowed: tuple[str, ...], where: str) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise LockError(f"{where} must be an object", hint=_HINT)
    unknown = [k for k in obj if k not in allowed]
    if unknown:
        raise LockError(
            f"{where}: unknown field {str(unknown[0])[:60]!r}, expected "
            f"{' or '.join(repr(a) for a in allowed)}",
            hint="upstream kernels rejects unknown fields in kernels.lock, so kernelkit does "
                 "too; kernelkit's variant hashes belong in kernels.lock.hashes. " + _HINT)
    return obj


def _parse_entry(entry: Any, index: int, source: Path | str) -> KernelLock:
    where = f"{source}: entry {index}"
    obj = _exact_keys(entry, ("dependency", "lock"), where)
    if "dependency" not in obj or "lock" not in obj:
        raise LockError(f"{where} must have 'dependency' and 'lock'", hint=_HINT)
    dep = _exact_keys(obj["dependency"], ("repo-id", "version", "revision"),
                      f"{where}.dependency")
    repo_id = dep.get("repo-id")
    if not is_repo_id(repo_id):
        raise LockError(f"{where}: 'dependency.repo-id' must be a string 'org/name' (letters, "
                        "digits, '.', '_', '-')", hint=_HINT)
    version, revision = dep.get("version"), dep.get("revision")
    if (version is None) == (revision is None):
        raise LockError(f"{where} ({repo_id}): the dependency needs exactly one of 'version' "
                        "and 'revision'", hint=_HINT)
    if version is not None and (isinstance(version, bool) or not isinstance(version, int)
                                or version < 0):
        raise LockError(f"{where} ({repo_id}): 'version' must be a non-negative integer "
                        "(a major version)", hint=_HINT)
    if revision is not None and (not isinstance(revision, str) or not revision):
        raise LockError(f"{where} ({repo_id}): 'revision' must be a non-empty string",
                        hint=_HINT)
    lock = _exact_keys(obj["lock"], ("commit",), f"{where}.lock")
    commit = lock.get("commit")
    if not isinstance(commit, str) or not _SHA_RE.match(commit):
        raise LockError(f"{where} ({repo_id}): 'lock.commit' must be a full commit id (40 or "
                        "64 lowercase hex)", hint=_HINT)
    return KernelLock(str(repo_id), commit, {}, version, revision)


def _parse_variants(variants: Any, where: str, hint: str) -> dict[str, VariantLock]:
    if not isinstance(variants, dict):
        raise LockError(f"{where}: 'variants' must be an object", hint=hint)
    out: dict[str, VariantLock] = {}
    for name, v in variants.items():
        if not is_variant_name(name):
            raise LockError(f"{where}: invalid variant name {name[:100]!r}", hint=hint)
        if not isinstance(v, dict) or v.get("hash_type") != HASH_TYPE \
                or not isinstance(v.get("hash"), str) or not _HASH_RE.match(v["hash"]):
            raise LockError(
                f"{where}: variant {name!r} must be "
                f'{{"hash": "{HASH_PREFIX}<64 hex>", "hash_type": "{HASH_TYPE}"}}', hint=hint)
        signer = v.get("signer")
        if signer is not None and not is_identity(signer):
            raise LockError(f"{where}: variant {name!r}: 'signer' must be a key fingerprint "
                            "'ed25519:SHA256:<43 base64>' or 'sigstore:<workflow URI>'",
                            hint=hint)
        out[name] = VariantLock(v["hash"], v["hash_type"], signer)
    return out


def _parse_legacy_entry(entry: Any, index: int, source: Path | str) -> KernelLock:
    """kernelkit's previous format: ``{"repo_id", "sha", "variants"}``."""
    where = f"{source}: entry {index}"
    if not isinstance(entry, dict):
        raise LockError(f"{where} must be an object", hint=_HINT)
    repo_id, sha = entry.get("repo_id"), entry.get("sha")
    if not is_repo_id(repo_id):
        raise LockError(f"{where}: 'repo_id' must be a string 'org/name' (letters, digits, "
                        "'.', '_', '-')", hint=_HINT)
    if not isinstance(sha, str) or not _SHA_RE.match(sha):
        raise LockError(f"{where} ({repo_id}): 'sha' must be a full commit id (40 or 64 hex)",
                        hint=_HINT)
    variants = _parse_variants(entry.get("variants"), f"{where} ({repo_id})", _HINT)
    return KernelLock(str(repo_id), sha, variants)


def parse_hashes(text: str, source: Path | str) -> dict[str, KernelLock]:
    """``repo_id -> KernelLock`` (commit and variant hashes) of a ``kernels.lock.hashes``."""
    hint = "delete it and run `kernelkit lock <project>` to write it again"
    data = _load_json(text, source)
    if not isinstance(data, dict) or data.get("kernelkit-lock-hashes") != HASHES_FORMAT \
            or not isinstance(data.get("kernels"), dict):
        raise LockError(f"{source}: not a kernelkit lock-hash file (format "
                        f"{HASHES_FORMAT})", hint=hint)
    out: dict[str, KernelLock] = {}
    for repo_id, entry in data["kernels"].items():
        where = f"{source}: {str(repo_id)[:100]}"
        commit = entry.get("commit") if isinstance(entry, dict) else None
        if not is_repo_id(repo_id) or not isinstance(commit, str) or not _SHA_RE.match(commit):
            raise LockError(f"{where}: needs a repo id 'org/name' and a full 'commit'", hint=hint)
        sources = entry.get("sources")
        if sources is not None and not is_digest(sources):
            raise LockError(f"{where}: 'sources' must be a digest sha256:<64 hex>", hint=hint)
        out[repo_id] = KernelLock(repo_id, commit, _parse_variants(entry.get("variants"), where,
                                                                   hint), sources=sources)
    return out


# --- reading and writing files ---------------------------------------------------------------


def _read_text(path: Path, missing: str) -> str:
    try:
        return read_input_text(path, MAX_JSON_BYTES)  # bounded, regular files only
    except (FileNotFoundError, NotADirectoryError):
        raise LockError(missing, hint="create it with `kernelkit lock <project>`") from None
    except InputFileError as exc:
        raise LockError(exc.message, hint=_HINT) from None


def read_lock_file(path: Path) -> LockFile:
    """Read ``path`` and, beside it, ``kernels.lock.hashes`` when present: its hashes are
    merged into the entries whose commit they name."""
    locks, legacy = parse_lock_file(_read_text(path, f"No kernels.lock file found: {path}"),
                                    path)
    side = hashes_path(path)
    if legacy or not side.is_file():
        return LockFile(path, locks, legacy)
    hashes = parse_hashes(_read_text(side, f"{side} disappeared"), side)
    merged = []
    for lock in locks:
        known = hashes.get(lock.repo_id)
        if known is not None and known.sha == lock.sha:
            lock = KernelLock(lock.repo_id, lock.sha, known.variants, lock.version,
                              lock.revision, known.sources)
        merged.append(lock)
    return LockFile(path, merged, legacy, side)


def read_locks(path: Path) -> list[KernelLock]:
    return read_lock_file(path).locks


def lock_entry(locks: Iterable[KernelLock], repo_id: str) -> KernelLock | None:
    """The first entry for ``repo_id`` (upstream's lookup rule)."""
    return next((lock for lock in locks if lock.repo_id == repo_id), None)


def _write_if_changed(path: Path, text: str) -> bool:
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


def write_locks(path: Path, locks: Iterable[KernelLock]) -> bool:
    """Write ``path`` (``kernels.lock``) and its ``.hashes`` sidecar unless they already hold
    exactly this content; return whether either was written. The sidecar goes first: its
    entries are keyed by commit, so a crash between the two writes leaves hashes that simply
    do not apply, never wrong ones."""
    locks = list(locks)
    side = hashes_path(path)
    wrote = False
    if any(lock.variants or lock.sources for lock in locks):
        wrote = _write_if_changed(side, dumps_hashes(locks))
    elif side.is_file():
        side.unlink()
        wrote = True
    return _write_if_changed(path, dumps_locks(locks)) or wrote
