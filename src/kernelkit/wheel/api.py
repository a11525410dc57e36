"""``kernel_to_wheels``: every variant of one kernel version -> one installable wheel each.

Fetches ``build/`` at the selected commit (one ``list_files`` and one ``fetch``) and writes a
wheel per variant; names and tags follow :mod:`kernelkit.wheel.naming`.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from kernelkit.artifact.layout import discover_variants
from kernelkit.artifact.metadata import Metadata
from kernelkit.errors import KernelkitError
from kernelkit.hub.port import Hub, Refs
from kernelkit.loader.versions import VersionRequest, release_tags, select_ref
from kernelkit.variants.name import is_variant_name
from kernelkit.wheel.build import WheelSpec, write_wheel
from kernelkit.wheel.naming import wheel_tags

_SEMVER_TAG = re.compile(r"^v(\d+\.\d+\.\d+\S*)\Z")


@dataclass(frozen=True)
class BuiltWheel:
    variant: str
    path: Path


def wheel_version(refs: Refs, ref: str | None, commit: str, metadata: Metadata) -> str:
    """The selected release tag's version; else the newest release tag on the same commit;
    else the kernel's major version from ``metadata.json``."""
    if ref and _SEMVER_TAG.match(ref):
        return ref[1:]
    same = [v for v, (_, c) in release_tags(refs).items() if c == commit]
    return str(max(same)) if same else str(metadata.version)


def kernel_to_wheels(repo_id: str, hub: Hub, dest: Path, *, version: VersionRequest | None = None,
                     revision: str | None = None) -> list[BuiltWheel]:
    refs = hub.list_refs(repo_id)
    sel = select_ref(refs, repo_id, revision=revision, version=version)
    entries = list(hub.list_files(repo_id, sel.commit, "build"))
    if not entries:
        raise KernelkitError(f"{repo_id} at {sel.commit} has no build variants",
                             hint="publish a build first")
    with tempfile.TemporaryDirectory(prefix="kernelkit-wheel-") as tmp:
        hub.fetch(repo_id, sel.commit, [e.path for e in entries], Path(tmp))
        return _write_all(Path(tmp) / "build", refs, sel.ref, sel.commit, dest)


def _write_all(build: Path, refs: Refs, ref: str | None, commit: str,
               dest: Path) -> list[BuiltWheel]:
    out: list[BuiltWheel] = []
    tree = discover_variants(build)
    for vdir in tree.variants if tree else ():
        if not is_variant_name(vdir.name):
            continue
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
        spec = WheelSpec(name=meta.name, version=wheel_version(refs, ref, commit, meta),
                         tags=tags, summary=f"{meta.name} kernel ({vdir.name})",
                         license=meta.license)
        shutil.rmtree(vdir / "__pycache__", ignore_errors=True)
        out.append(BuiltWheel(vdir.name, write_wheel(vdir, spec, dest)))
    return out
