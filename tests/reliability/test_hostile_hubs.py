"""Hostile hubs: crafted repositories and crafted hub answers are refused; nothing is written
outside the cache and nothing is imported.

Repositories are real git repositories in a real local hub (crafted with git plumbing where
the hub's own publish would refuse). Answers no honest kernelkit hub gives (``..`` paths, a
"commit" that is a path, refs with newlines) come from ``HostileHub``: a test double standing
in for a remote hub we cannot make lie (the Hugging Face Hub or a compromised git server); it
forwards every other call to the real local hub."""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kernelkit.artifact.layout import seal_variant
from kernelkit.artifact.metadata import Metadata, MetadataError
from kernelkit.errors import (
    HubError,
    IntegrityError,
    KernelkitError,
    TrustError,
    VariantNotFoundError,
)
from kernelkit.hub.gitrepo import ZERO_ID
from kernelkit.hub.local import LocalGitHub
from kernelkit.hub.port import FileEntry, Refs
from kernelkit.loader import api
from kernelkit.loader.cache import RepoCache
from tests.reliability.common import VARIANT, publish_tree, variant_tree

pytest.importorskip("torch")


class HostileHub:
    """A real local hub whose answers can be replaced one method at a time (see module doc)."""

    def __init__(self, inner: LocalGitHub, **overrides: Callable[..., Any]) -> None:
        self.inner = inner
        self.overrides = overrides

    def __getattr__(self, name: str) -> Any:
        if name in self.overrides:
            return lambda *a, **k: self.overrides[name](self.inner, *a, **k)
        return getattr(self.inner, name)


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """A hub, a cache, and afterwards: nothing written outside the cache or the hub, and no
    kernel module imported."""
    for var in ("LOCAL_KERNELS", "KERNELKIT_OFFLINE", "HF_HUB_OFFLINE", "KERNELKIT_HUB",
                "KERNELKIT_TRUSTED_PUBLISHERS"):
        monkeypatch.delenv(var, raising=False)
    cache = tmp_path / "cache"
    monkeypatch.setenv("KERNELKIT_CACHE", str(cache))
    hub = LocalGitHub(tmp_path / "hub")
    before_mods = set(sys.modules)
    w: dict[str, Any] = {"hub": hub, "cache": cache, "tmp": tmp_path}
    yield w
    outside = [p for p in tmp_path.rglob("*") if not p.is_relative_to(cache)
               and not p.is_relative_to(tmp_path / "hub") and not p.is_relative_to(tmp_path / "k")]
    assert outside == [], outside
    new_mods = set(sys.modules) - before_mods
    assert not [m for m in new_mods if m.startswith("_kernelkit_")], new_mods


def sealed(w: dict[str, Any], **kwargs: Any) -> Path:
    return variant_tree(w["tmp"] / "k" / uuid.uuid4().hex[:6], **kwargs)


def publish(w: dict[str, Any], repo: str, vdir: Path, branch: str = "v1") -> str:
    return publish_tree(w["hub"], repo, branch, vdir.parent.parent)


def load(w: dict[str, Any], repo: str, hub: Any = None, **kw: Any) -> Any:
    kw.setdefault("version", 1)
    return api.get_kernel(repo, trust_remote_code=True, hub=hub or w["hub"], **kw)


def no_variant_cached(w: dict[str, Any]) -> None:
    assert not list(w["cache"].rglob(f"build/{VARIANT}/__init__.py"))


# --- crafted repositories (real git) ----------------------------------------------------------


def test_lying_digest(world: dict[str, Any]) -> None:
    vdir = sealed(world)
    (vdir / "_ops.py").write_text("import os\nos.system('echo pwned')\n")
    publish(world, "evil/lying", vdir)
    with pytest.raises(IntegrityError, match=r"_ops\.py"):
        load(world, "evil/lying")
    no_variant_cached(world)


def test_missing_digest(world: dict[str, Any]) -> None:
    vdir = sealed(world)
    meta = Metadata.read(vdir / "metadata.json")
    (vdir / "metadata.json").write_text(Metadata(**{**meta.__dict__, "digest": None}).dumps())
    publish(world, "evil/nodigest", vdir)
    with pytest.raises(IntegrityError, match="no digest"):
        load(world, "evil/nodigest")
    no_variant_cached(world)


def test_extra_native_library_not_in_the_digest(world: dict[str, Any]) -> None:
    vdir = sealed(world)
    (vdir / "libevil.so").write_bytes(b"\x7fELF" + b"\0" * 64)
    publish(world, "evil/extra", vdir)
    with pytest.raises(IntegrityError, match=r"libevil\.so"):
        load(world, "evil/extra")
    no_variant_cached(world)


def test_huge_file_not_in_the_digest(world: dict[str, Any]) -> None:
    vdir = sealed(world)
    with open(vdir / "huge.bin", "wb") as fh:
        fh.truncate(64 << 20)
    publish(world, "evil/huge", vdir)
    with pytest.raises(IntegrityError, match=r"huge\.bin"):
        load(world, "evil/huge")
    no_variant_cached(world)
    assert not [p for p in world["cache"].rglob("*") if p.is_file() and p.stat().st_size > 1e6]


def test_metadata_id_abuse(world: dict[str, Any]) -> None:
    vdir = sealed(world)
    meta = Metadata.read(vdir / "metadata.json")
    seal_variant(vdir, Metadata(**{**meta.__dict__, "id": "os", "digest": None}))
    publish(world, "evil/os", vdir)
    real_os = sys.modules["os"]
    module = load(world, "evil/os")
    assert sys.modules["os"] is real_os and module is not real_os
    for name in [m for m in sys.modules if m.startswith(module.__name__)]:
        sys.modules.pop(name)  # the fixture checks that nothing else was imported


def test_invalid_metadata_id(world: dict[str, Any]) -> None:
    vdir = sealed(world)
    text = (vdir / "metadata.json").read_text()
    meta = Metadata.read(vdir / "metadata.json")
    (vdir / "metadata.json").write_text(text.replace(f'"{meta.id}"', '"os.path"'))
    publish(world, "evil/badid", vdir)
    with pytest.raises(MetadataError, match="identifier"):
        load(world, "evil/badid")
    no_variant_cached(world)


def test_symlink_in_the_repository(world: dict[str, Any]) -> None:
    vdir = sealed(world)
    commit = publish(world, "evil/link", vdir)
    repo = world["hub"].repo("evil/link")
    entries = [(e.mode, e.oid, e.path) for e in repo.ls_tree(commit)]
    link = repo.git("hash-object", "-w", "--stdin", input=b"/etc/passwd").stdout.decode().strip()
    entries.append(("120000", link, f"build/{VARIANT}/evil"))
    tree = repo.write_tree(sorted(entries, key=lambda e: e[2]))
    new = repo.commit_tree(tree, commit, "add a symlink")
    assert repo.update_ref("refs/heads/v1", new, commit) is None
    with pytest.raises(IntegrityError, match="evil"):
        load(world, "evil/link")
    no_variant_cached(world)
    assert not [p for p in world["cache"].rglob("*") if p.is_symlink()]


def test_untrusted_publisher_downloads_nothing(world: dict[str, Any]) -> None:
    publish(world, "stranger/k", sealed(world))
    with pytest.raises(TrustError):
        api.get_kernel("stranger/k", version=1, hub=world["hub"])
    assert not world["cache"].exists() or not any(world["cache"].rglob("*"))


# --- crafted answers (HostileHub) -------------------------------------------------------------


def test_dotdot_and_absolute_paths_in_a_listing(world: dict[str, Any]) -> None:
    publish(world, "evil/paths", sealed(world))
    for bad in (f"build/{VARIANT}/../../../../escape.py", "/etc/passwd",
                f"build/{VARIANT}/./x", f"build/{VARIANT}/a\nb"):
        def listing(inner: LocalGitHub, repo: str, commit: str, path: str = "",
                    bad: str = bad) -> list[FileEntry]:
            return [*inner.list_files(repo, commit, path), FileEntry(bad, 10, "0" * 40)]

        with pytest.raises(KernelkitError):
            load(world, "evil/paths", hub=HostileHub(world["hub"], list_files=listing))
        no_variant_cached(world)


def test_a_commit_that_is_a_path(world: dict[str, Any]) -> None:
    publish(world, "evil/commit", sealed(world))
    for answer in ("../../../../tmp/x", "/etc", "a" * 40 + "\n", ZERO_ID[:39]):
        hostile = HostileHub(world["hub"], resolve=lambda inner, repo, rev, a=answer: a)
        with pytest.raises(HubError, match="not a full commit id"):
            load(world, "evil/commit", hub=hostile, version=None, revision="v1")
        refs = Refs(branches={"v1": answer}, tags={})
        hostile = HostileHub(world["hub"], list_refs=lambda inner, repo, r=refs: r)
        with pytest.raises(HubError, match="not a full commit id"):
            load(world, "evil/commit", hub=hostile)


def test_hostile_ref_names_are_not_recorded(world: dict[str, Any]) -> None:
    commit = publish(world, "evil/refs", sealed(world))
    names = ["v1", "v2\n", "../../../x", "a" * 300, ".", "..", "v1.0.0/../../y"]
    refs = Refs(branches=dict.fromkeys(names, commit), tags={})
    hostile = HostileHub(world["hub"], list_refs=lambda inner, repo: refs)
    load(world, "evil/refs", hub=hostile)
    rc = RepoCache.of(world["cache"], "evil/refs", hostile.hub_identity)
    listing = json.loads(rc.listing_path().read_bytes())
    assert (listing["branches"], listing["tags"]) == ({"v1": commit}, {}), listing
    assert [p.name for p in rc.root.rglob("*") if p.parent.name == "refs"] == ["listing.json"]
    for m in [m for m in sys.modules if m.startswith("_kernelkit_")]:
        sys.modules.pop(m)


def test_hostile_variant_names_are_ignored(world: dict[str, Any]) -> None:
    publish(world, "evil/dirs", sealed(world))
    hostile = HostileHub(world["hub"], list_dirs=lambda inner, repo, commit, path="build": [
        "..", "../../x", ".hidden", "a/b", "x" * 300])
    with pytest.raises(VariantNotFoundError):
        load(world, "evil/dirs", hub=hostile)
    no_variant_cached(world)
