"""Data for ``kernelkit versions`` and ``kernelkit info`` (values; the CLI prints them)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kernelkit.artifact.layout import discover_variants
from kernelkit.artifact.metadata import Metadata
from kernelkit.errors import KernelkitError
from kernelkit.hub.port import Hub
from kernelkit.loader.versions import describe_refs
from kernelkit.variants.choose import Decision, rank_variants
from kernelkit.variants.host import System
from kernelkit.variants.name import parse_variant


@dataclass(frozen=True)
class VersionRow:
    kind: str  # version (branch v<N>) | release (tag v<x.y.z>) | branch | tag
    name: str
    commit: str
    decisions: list[Decision]


def versions_report(hub: Hub, repo_id: str, system: System) -> list[VersionRow]:
    """Every branch and tag with its commit and which variants fit ``system`` (and why)."""
    rows = []
    listed: dict[str, list[str]] = {}
    for kind, name, commit in describe_refs(hub.list_refs(repo_id)):
        if commit not in listed:
            listed[commit] = hub.list_dirs(repo_id, commit, "build")
        rows.append(VersionRow(kind, name, commit, rank_variants(listed[commit], system)))
    return rows


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
        return dict.fromkeys(("name", "version", "license", "upstream", "source",
                              "python_depends", "digest", "provenance"))
    full = meta.to_json()
    return {"name": meta.name, "version": meta.version, "license": meta.license,
            "upstream": meta.upstream, "source": meta.source,
            "python_depends": list(meta.python_depends),
            "digest": full.get("digest"), "provenance": full.get("provenance")}


def local_info(path: Path) -> dict[str, Any]:
    tree = discover_variants(path)
    if tree is None:
        raise KernelkitError(f"No build variants found in: {path}",
                             hint="point at a kernel project, its build/ or a variant directory")
    names = tree.names
    meta = Metadata.read(tree.variants[0] / "metadata.json")
    return {"path": str(path), **_metadata_fields(meta), "backends": _backends(names),
            "variants": names}


def hub_info(hub: Hub, repo_id: str, *, revision: str | None = None,
             version: int | str | None = None) -> dict[str, Any]:
    """Upstream's keys plus ``commit``, ``variants``, ``digest`` and ``provenance``; with neither
    revision nor version: the highest ``v<N>`` branch, else ``main``. Resolved by the loader's
    one resolve path (its cache, a ``kernel-status.toml`` redirect followed: then ``repo_id``
    is the destination and ``redirected_from`` the repository asked for)."""
    from kernelkit.loader.resolve import resolve_kernel

    found = resolve_kernel(repo_id, revision=revision, version=version, hub=hub,
                           newest_by_default=True)
    names = found.variants
    where = found.ref or found.commit
    if not names:
        raise KernelkitError(f"{found.repo_id} at {where} has no build variants")
    raw = hub.read_file(found.repo_id, found.commit, f"build/{names[0]}/metadata.json")
    source = f"{found.repo_id}@{found.commit[:12]}:build/{names[0]}/metadata.json"
    meta = Metadata.loads(raw, source) if raw else None
    redirect = {"redirected_from": found.redirected_from} if found.redirected_from else {}
    return {"repo_id": found.repo_id, **redirect, "revision": where, "commit": found.commit,
            **_metadata_fields(meta), "backends": _backends(names), "variants": names}
