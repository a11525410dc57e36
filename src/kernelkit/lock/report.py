"""Data for ``kernelkit variants`` and ``kernelkit info`` (values; the CLI prints them)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kernelkit.artifact.layout import discover_variants
from kernelkit.artifact.metadata import Metadata
from kernelkit.errors import (
    KernelkitError,
    RevisionNotFoundError,
    UsageError,
    VersionNotFoundError,
)
from kernelkit.hub.port import Hub
from kernelkit.loader.versions import select_ref
from kernelkit.variants.choose import Decision
from kernelkit.variants.name import parse_variant


@dataclass(frozen=True)
class RevisionVariants:
    """The variants of one revision, ranked for this machine (``kernelkit variants``)."""

    version: int | None  # the major version (branch v<N>); None for a revision or specifier
    revision: str  # what was asked: v<N>, a branch, tag or commit, or a version specifier
    commit: str
    decisions: list[Decision]


def variants_report(repo_id: str, *, all_versions: bool = False,
                    version: int | str | None = None, revision: str | None = None,
                    backend: str | None = None, hub: Hub | None = None,
                    cache_dir: Path | None = None) -> list[RevisionVariants]:
    """Upstream 0.19's ``kernels variants`` selection: one ``revision``; one ``version`` (an
    integer, ``"latest"``, or, kernelkit's addition, a specifier over release tags); every
    major version (``all_versions``); by default the latest major version, else ``main`` (as
    ``info``). Works offline from the refs recorded in the cache."""
    from kernelkit.loader.api import get_kernel_versions, rank_kernel_variants

    if sum((all_versions, version is not None, revision is not None)) > 1:
        raise UsageError("Only one of --all-versions, --version or --revision can be given")

    def ranked(version_n: int | None, asked: str, **which: Any) -> RevisionVariants:
        commit, decisions = rank_kernel_variants(repo_id, backend=backend, hub=hub,
                                                 cache_dir=cache_dir, **which)
        return RevisionVariants(version_n, asked, commit, decisions)

    if revision is not None:
        return [ranked(None, revision, revision=revision)]
    major = _major(version)
    if version is not None and version != "latest" and major is None:
        return [ranked(None, str(version), version=version)]  # a specifier
    majors = get_kernel_versions(repo_id, hub=hub, cache_dir=cache_dir)
    listed = ", ".join(str(n) for n in sorted(majors)) or "none"
    if major is not None and major not in majors:
        raise VersionNotFoundError(repo_id, f"v{major}", [f"v{n}" for n in sorted(majors)],
                                   f"Version {major} not found, available versions: {listed}",
                                   hint=f"{repo_id} has no branch v{major}")
    if not majors:
        unversioned = VersionNotFoundError(
            repo_id, "latest", [], f"Repository does not support kernel versions: {repo_id}",
            hint="it has no v<N> branch; pass --revision (e.g. main)")
        if version is not None or all_versions:
            raise unversioned
        try:  # as `info`: main when there is no version branch
            return [ranked(None, "main", revision="main")]
        except RevisionNotFoundError:
            raise unversioned from None
    chosen = [major] if major is not None else sorted(majors) if all_versions else [max(majors)]
    return [ranked(n, f"v{n}", revision=majors[n]) for n in chosen]


def _major(version: int | str | None) -> int | None:
    if isinstance(version, int):
        return version
    if isinstance(version, str) and version.isdecimal():
        return int(version)
    return None


def _backends(variants: list[str]) -> list[str]:
    out = set()
    for v in variants:
        try:
            out.add(parse_variant(v).backend)
        except ValueError:
            continue
    return sorted(out)


def _metadata_fields(meta: Metadata | None) -> dict[str, Any]:
    if meta is None:
        return dict.fromkeys(("name", "version", "kernels_minver", "license", "upstream",
                              "source", "python_depends", "digest", "provenance"))
    full = meta.to_json()
    return {"name": meta.name, "version": meta.version,
            "kernels_minver": full.get("kernels-minver"), "license": meta.license,
            "upstream": meta.upstream, "source": meta.source,
            "python_depends": list(meta.python_depends),
            "digest": full.get("digest"), "provenance": full.get("provenance")}


def _this_machines(names: list[str]) -> str:
    """The variant ``get_kernel`` would load here, else the first (their metadata agree on
    what ``info`` shows but the digest)."""
    from kernelkit.variants.choose import best_variant, rank_variants
    from kernelkit.variants.host import detect_system

    return best_variant(rank_variants(names, detect_system())) or names[0]


def local_info(path: Path, *, hub: Callable[[], Hub] | None = None,
               dep_tree: bool = False) -> dict[str, Any]:
    """``hub`` (called only for a kernel with ``kernel-depends``) resolves its dependencies."""
    tree = discover_variants(path)
    if tree is None:
        raise KernelkitError(f"No build variants found in: {path}",
                             hint="point at a kernel project, its build/ or a variant directory")
    names = tree.names
    variant = _this_machines(names)
    meta = Metadata.read(tree.root / variant / "metadata.json")
    return {"path": str(path), "variant": variant, **_metadata_fields(meta),
            **_dependency_fields(str(path), meta, hub, dep_tree), "backends": _backends(names),
            "variants": names}


def hub_info(hub: Hub, repo_id: str, *, revision: str | None = None,
             version: int | str | None = None, dep_tree: bool = False) -> dict[str, Any]:
    """Upstream's keys plus ``commit``, ``variants``, ``digest`` and ``provenance``; with neither
    revision nor version: the highest ``v<N>`` branch, else ``main``. ``kernel_depends``: every
    kernel dependency, transitively (resolved on ``hub``); ``dependency_tree`` with
    ``dep_tree``: the same as nested ``{repo_id: {...}}``. Resolved by the loader's one resolve
    path (its cache, a ``kernel-status.toml`` redirect followed: then ``repo_id`` is the
    destination and ``redirected_from`` the repository asked for)."""
    from kernelkit.loader.resolve import resolve_kernel

    found = resolve_kernel(repo_id, revision=revision, version=version, hub=hub,
                           newest_by_default=True)
    names = found.variants
    where = found.ref or found.commit
    if not names:
        raise KernelkitError(f"{found.repo_id} at {where} has no build variants")
    variant = _this_machines(names)
    meta = _hub_metadata(hub, found.repo_id, found.commit, variant)
    redirect = {"redirected_from": found.redirected_from} if found.redirected_from else {}
    return {"repo_id": found.repo_id, **redirect, "revision": where, "commit": found.commit,
            "variant": variant, **_metadata_fields(meta),
            **_dependency_fields(found.repo_id, meta, (lambda: hub), dep_tree),
            "backends": _backends(names), "variants": names}

def _hub_metadata(hub: Hub, repo_id: str, commit: str, variant: str) -> Metadata | None:
    raw = hub.read_file(repo_id, commit, f"build/{variant}/metadata.json")
    return Metadata.loads(raw, f"{repo_id}@{commit[:12]}:build/{variant}/metadata.json") \
        if raw else None


# --- kernel dependencies ----------------------------------------------------------------------


def _dependency_fields(root: str, meta: Metadata | None, hub: Callable[[], Hub] | None,
                       dep_tree: bool) -> dict[str, Any]:
    """``kernel_depends`` (every dependency, transitively, sorted), ``python_depends`` of the
    whole tree (as upstream's ``info``), and ``dependency_tree`` when asked."""
    if meta is None or not meta.kernel_depends or hub is None:
        tree: dict[str, Any] = {}
        python: set[str] = set(meta.python_depends) if meta else set()
    else:
        python = set(meta.python_depends)
        tree = dependency_tree(hub(), meta, chain=(root,), python=python)
    out: dict[str, Any] = {"kernel_depends": sorted(_flatten(tree)),
                           "python_depends": sorted(python)}
    if dep_tree:
        out["dependency_tree"] = tree
    return out


def dependency_tree(hub: Hub, meta: Metadata, *, chain: tuple[str, ...] = (),
                    python: set[str] | None = None) -> dict[str, Any]:
    """``{repo_id: {its dependencies...}}`` of ``meta``'s ``kernel-depends``, each resolved on
    ``hub`` (version or revision -> commit -> this machine's variant -> its metadata.json),
    without downloading or importing anything; ``python`` collects their ``python-depends``."""
    from kernelkit.errors import KernelDepCycleError
    from kernelkit.loader.kernel_deps import kernel_dependencies

    out: dict[str, Any] = {}
    for dep in kernel_dependencies(meta):
        if dep.repo_id in chain:
            raise KernelDepCycleError(
                f"Cyclic kernel dependency detected: {dep.repo_id} "
                f"({' -> '.join((*chain, dep.repo_id))})",
                hint="a kernel cannot depend on itself, directly or through others")
        dep_meta = _dependency_metadata(hub, dep.repo_id, dep.revision, dep.version)
        if python is not None:
            python.update(dep_meta.python_depends)
        out[dep.repo_id] = dependency_tree(hub, dep_meta, chain=(*chain, dep.repo_id),
                                           python=python)
    return dict(sorted(out.items()))


def _dependency_metadata(hub: Hub, repo_id: str, revision: str | None,
                         version: int | None) -> Metadata:
    if revision is not None:
        commit = hub.resolve(repo_id, revision)
    else:
        commit = select_ref(hub.list_refs(repo_id), repo_id, version=version).commit
    names = hub.list_dirs(repo_id, commit, "build")
    meta = _hub_metadata(hub, repo_id, commit, _this_machines(names)) if names else None
    if meta is None:
        raise KernelkitError(f"kernel dependency {repo_id} at {revision or f'v{version}'} "
                             f"({commit[:12]}) has no build variant with a metadata.json",
                             hint="ask its publisher to upload a build")
    return meta


def _flatten(tree: dict[str, Any]) -> set[str]:
    out = set(tree)
    for sub in tree.values():
        out |= _flatten(sub)
    return out


def format_tree(root: str, tree: dict[str, Any], prefix: str = "") -> list[str]:
    """``tree`` drawn as upstream's ``info --dep-tree`` draws it (``|--``, a backtick for the
    last child), under ``root``."""
    lines = [root] if not prefix else []
    for i, (name, sub) in enumerate(tree.items()):
        last = i == len(tree) - 1
        lines.append(f"{prefix}{'`-- ' if last else '|-- '}{name}")
        lines += format_tree(name, sub, prefix + ("    " if last else "|   "))
    return lines
