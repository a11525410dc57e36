"""``[tool.kernels.dependencies]`` of a project and ``kernelkit lock`` (upstream-loader.md §3).

```toml
[tool.kernels.dependencies]
"kernels-community/relu" = 1          # the branch v1
"acme/img2gray" = ">=1.1,<2"          # the newest release tag v1.x.y with x >= 1
```

Locking resolves each dependency to a commit (``list_refs``) and hashes every variant from a
hub listing (``list_files``; nothing is downloaded). ``kernels.lock`` records the dependency as
upstream does: ``"version": N`` for ``= N``; a version specifier (kernelkit only) is recorded as
``"revision": "<the release tag it chose>"``. The hashes go to ``kernels.lock.hashes``. An entry
whose commit did not change keeps its hashes (no listing at all), so re-locking an unchanged
project costs one ``list_refs`` per dependency and leaves both files byte-identical. A lock
written by upstream (commit only) or in kernelkit's previous format is rewritten in this form.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kernelkit.errors import InputFileError, LockError
from kernelkit.hub.port import Hub
from kernelkit.loader.cache import RepoCache
from kernelkit.loader.identity import is_repo_id
from kernelkit.loader.versions import VersionRequest, parse_version_request
from kernelkit.lock.hashing import variant_hashes
from kernelkit.lock.lockfile import (
    LOCK_NAME,
    KernelLock,
    VariantLock,
    lock_entry,
    read_lock_file,
    write_locks,
)
from kernelkit.util.inputs import MAX_TOML_BYTES, parse_toml, read_input_text


@dataclass(frozen=True)
class KernelDependency:
    repo_id: str
    version: VersionRequest


@dataclass(frozen=True)
class LockResult:
    path: Path
    locks: list[KernelLock]
    written: bool  # False: the files already held exactly this content
    changed: list[str]  # repo ids whose entry is new or different
    converted: bool = False  # the previous file was kernelkit's old format


def read_dependencies(project_dir: Path) -> list[KernelDependency]:
    """The ``[tool.kernels.dependencies]`` table of ``project_dir/pyproject.toml``."""
    path = project_dir / "pyproject.toml"
    try:
        data = parse_toml(read_input_text(path, MAX_TOML_BYTES), path)
    except (FileNotFoundError, NotADirectoryError):
        raise LockError(f"no pyproject.toml in {project_dir}",
                        hint="pass the project directory that holds pyproject.toml") from None
    except InputFileError as exc:
        raise LockError(exc.message, hint=exc.hint) from None
    tool = data.get("tool", {})
    kernels = tool.get("kernels", {}) if isinstance(tool, dict) else None
    if not isinstance(kernels, dict):
        raise LockError(f"{path}: tool.kernels must be a table")
    table: Any = kernels.get("dependencies")
    if table is None:
        raise LockError(
            f"{path} has no [tool.kernels.dependencies] table; nothing to lock",
            hint='add e.g.\n[tool.kernels.dependencies]\n"kernels-community/relu" = 1',
        )
    if not isinstance(table, dict):
        raise LockError(f"{path}: tool.kernels.dependencies must be a table")
    return [_dependency(path, repo_id, value) for repo_id, value in table.items()]


def _dependency(path: Path, repo_id: str, value: Any) -> KernelDependency:
    where = f"{path}: tool.kernels.dependencies.{repo_id[:100]!r}"
    if not is_repo_id(repo_id):
        raise LockError(f"{where}: a kernel must be named 'org/name' (letters, digits, '.', "
                        "'_', '-')")
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise LockError(f"{where}: the value must be a major version (1) or a version "
                        f"specifier string ('>=1.1,<2'), not {value!r}")
    try:
        parse_version_request(value)
    except ValueError as exc:
        raise LockError(f"{where}: {exc}") from None
    return KernelDependency(repo_id, value)


def resolve_lock(hub: Hub, dep: KernelDependency, previous: KernelLock | None = None,
                 *, refresh: bool = False) -> KernelLock:
    """Lock one dependency; reuse ``previous``'s hashes when it pins the same commit. The
    version is resolved by the loader's one resolve path (``kernelkit.loader.resolve``), so a
    lock means what ``get_kernel`` means; a dependency that redirects (``kernel-status.toml``)
    is refused: a lock pins one repository's commit, and the redirect's target is a moving
    revision."""
    from kernelkit.loader.resolve import resolve_kernel

    found = resolve_kernel(dep.repo_id, version=dep.version, hub=hub)
    if found.redirected_from is not None:
        raise LockError(
            f"{dep.repo_id} (version {dep.version!r}) redirects to {found.repo_id} "
            "(kernel-status.toml): a lock pins one repository's commit",
            hint=f'depend on the new repository instead: "{found.repo_id}" = <version> in '
                 "[tool.kernels.dependencies], then run `kernelkit lock` again")
    commit = found.commit
    request = parse_version_request(dep.version)
    version = request if isinstance(request, int) else None
    revision = None if isinstance(request, int) else (found.ref or commit)
    if previous is not None and previous.sha == commit and previous.variants and not refresh:
        return KernelLock(dep.repo_id, commit, previous.variants, version, revision,
                          previous.sources)
    listing = hub.list_files(dep.repo_id, commit, "build")
    hashes = variant_hashes(listing)
    if not hashes:
        raise LockError(f"{dep.repo_id} at {commit} has no build variants (nothing under build/)",
                        hint="publish a build of the kernel first")
    from kernelkit.loader.settings import read_settings
    from kernelkit.lock.signers import locked_signers

    signers = locked_signers(hub, dep.repo_id, commit, listing, hashes, read_settings())
    return KernelLock(dep.repo_id, commit,
                      {v: VariantLock(h, signer=signers.get(v)) for v, h in hashes.items()},
                      version, revision, _sources(hub, found.cache, commit, sorted(hashes)))


def _sources(hub: Hub, rc: RepoCache, commit: str, variants: list[str]) -> str | None:
    """The digest of the sources the commit's builds record (``None``: they record none), so
    a locked build from source (``build_missing``) builds from exactly those bytes."""
    from kernelkit.loader.install import LazyHub
    from kernelkit.loader.sources import published_sources

    record = published_sources(LazyHub(hub, lambda: hub), rc, commit, variants, offline=False)
    return record.digest if record is not None else None


def lock_project(project_dir: Path, hub: Hub, *, refresh: bool = False) -> LockResult:
    """Resolve every dependency and write ``project_dir/kernels.lock`` (and its hashes) when
    they changed."""
    deps = read_dependencies(project_dir)
    path = project_dir / LOCK_NAME
    old = read_lock_file(path) if path.is_file() else None
    previous = old.locks if old is not None else []
    locks = [resolve_lock(hub, d, lock_entry(previous, d.repo_id), refresh=refresh) for d in deps]
    changed = [lock.repo_id for lock in locks if lock_entry(previous, lock.repo_id) != lock]
    written = write_locks(path, locks)
    return LockResult(path, locks, written, changed, converted=old is not None and old.legacy)
