"""``kernel_to_wheels``: every variant of one kernel version -> one installable wheel each.

Nothing the hub says is trusted more than ``get_kernel`` trusts it: every variant is
downloaded into the kernel cache and verified against its digest by the loader's own code
(``ensure_variant``: a changed, missing or extra file is an ``IntegrityError``) before any
wheel is written, and wheels are written from those verified copies. The names a wheel
installs come from the repository id the user asked for, never from hub metadata, and never
shadow the standard library, ``sitecustomize``/``usercustomize``, torch, or a package another
installed distribution provides (:func:`kernelkit.wheel.naming.check_package_name`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kernelkit.artifact.metadata import Metadata
from kernelkit.errors import KernelkitError
from kernelkit.hub.port import Hub, Refs
from kernelkit.loader.cache import RepoCache
from kernelkit.loader.identity import check_repo_id
from kernelkit.loader.install import LazyHub, ensure_variant
from kernelkit.loader.resolve import variant_names
from kernelkit.loader.versions import VersionRequest, release_tags, select_ref
from kernelkit.wheel.build import WheelSpec, write_wheel
from kernelkit.wheel.naming import (
    Installed,
    check_package_name,
    installed_packages,
    package_name,
    project_name,
    wheel_tags,
)


@dataclass(frozen=True)
class BuiltWheel:
    variant: str
    path: Path


def wheel_version(refs: Refs, ref: str | None, commit: str, metadata: Metadata) -> str:
    """The selected release tag's version; else the newest release tag on the same commit;
    else the kernel's major version from ``metadata.json``. Always a normalized public PEP 440
    version (a tag's text never reaches a file name unparsed)."""
    tags = release_tags(refs)
    chosen = next((v for v, (name, _) in tags.items() if name == ref), None)
    if chosen is None:
        same = [v for v, (_, c) in tags.items() if c == commit]
        chosen = max(same) if same else None
    return chosen.public if chosen is not None else str(int(metadata.version))


def kernel_to_wheels(repo_id: str, hub: Hub, dest: Path, *, cache_dir: Path,
                     version: VersionRequest | None = None, revision: str | None = None,
                     installed: dict[str, list[Installed]] | None = None) -> list[BuiltWheel]:
    """One wheel per variant of ``repo_id`` at the selected version, in ``dest``. Variants go
    through ``cache_dir`` (the loader's cache), verified; ``installed`` (top-level package ->
    distributions, default: this environment's) is what a wheel's package must not shadow."""
    check_repo_id(repo_id)
    package = check_package_name(package_name(repo_id), repo_id,
                                 installed_packages() if installed is None else installed)
    refs = hub.list_refs(repo_id)
    sel = select_ref(refs, repo_id, revision=revision, version=version)
    rc = RepoCache.of(cache_dir, repo_id, hub.hub_identity)
    lazy = LazyHub(hub, lambda: hub)
    names = variant_names(lazy, rc, sel.commit, offline=False)
    if not names:
        raise KernelkitError(f"{repo_id} at {sel.commit} has no build variants",
                             hint="publish a build first")
    # every variant verified before the first wheel is written: all wheels or none
    verified = [ensure_variant(lazy, rc, sel.commit, name, offline=False) for name in names]
    out: list[BuiltWheel] = []
    for vdir in verified:
        meta = Metadata.read(vdir / "metadata.json")
        try:
            tags = wheel_tags(vdir.name)
        except ValueError as exc:
            raise KernelkitError(str(exc), hint="convert the repository's torch variants "
                                 "only, or load this one with get_kernel") from None
        if meta.build_layout != "files":
            raise KernelkitError(f"variant {vdir.name}: build-layout {meta.build_layout!r} "
                                 "(the package inside a zip archive) cannot become a wheel",
                                 hint="load it with get_kernel instead")
        spec = WheelSpec(name=project_name(repo_id), package=package, repo_id=repo_id,
                         commit=sel.commit,
                         version=wheel_version(refs, sel.ref, sel.commit, meta),
                         tags=tags,
                         summary=f"{meta.name} kernel ({vdir.name}) from {repo_id}",
                         license=meta.license)
        out.append(BuiltWheel(vdir.name, write_wheel(vdir, spec, dest)))
    return out
