"""Crash injection: kill -9 at random points of a download, of a build's install step and of
an upload. After every kill each store is in its old or its new state; the next command
recovers with no manual cleanup, staging directories included.

``build``: compiling is minutes per run, so the injected process runs the build's *install
step* exactly as ``builder/compile/variant.py::lay_out_variant`` does (stage in a temporary sibling,
seal, ``replace_dir`` into ``build/<variant>``); the recovery the next build must do first is
``recover_dir`` + ``remove_stale_siblings`` (see docs/security.md).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from kernelkit.errors import IntegrityError
from kernelkit.hub.local import LocalGitHub
from kernelkit.loader.cache import RepoCache
from kernelkit.loader.verify import verify_variant
from tests.reliability.common import (
    CONFIG,
    VARIANT,
    counter,
    git_fsck,
    kernelkit,
    publish_tree,
    python,
    staging_leftovers,
    variant_tree,
)

RNG = random.Random(int(os.environ.get("KERNELKIT_RELIABILITY_SEED", "11")))
PAYLOAD = 6 << 20  # long enough to be killed in the middle of writing it
INJECTED = counter("kill -9 injections")


def tree_hash(path: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(path.rglob("*")):
        if p.is_file() and "__pycache__" not in p.parts:
            h.update(p.relative_to(path).as_posix().encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


def run_and_kill(start: Callable[[], subprocess.Popen[str]], window: float) -> bool:
    """Start a process and kill -9 it at a random instant in ``window``; True if it was still
    running (a real injection) rather than already finished."""
    proc = start()
    time.sleep(RNG.uniform(0.0, window))
    alive = proc.poll() is None
    if alive:
        proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=120)
    return alive


def timed(start: Callable[[], subprocess.Popen[str]]) -> float:
    t0 = time.monotonic()
    proc = start()
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    return time.monotonic() - t0


# --- download ---------------------------------------------------------------------------------

DOWNLOAD = """
from pathlib import Path
from kernelkit.hub.local import LocalGitHub
from kernelkit.loader.cache import RepoCache
from kernelkit.loader.install import LazyHub, ensure_variant
hub = LocalGitHub(Path({hub!r}))
rc = RepoCache.of(Path({cache!r}), {repo!r}, hub.hub_identity)
ensure_variant(LazyHub(hub, lambda: hub), rc, {commit!r}, {variant!r}, offline=False)
"""


def test_kill_during_download(tmp_path: Path) -> None:
    hub, repo, cache = LocalGitHub(tmp_path / "hub"), "acme/dl", tmp_path / "cache"
    commit = publish_tree(hub, repo, "v1", variant_tree(tmp_path / "k", big=PAYLOAD).parent.parent)
    rc = RepoCache.of(cache, repo, hub.hub_identity)
    final = rc.variant_dir(commit, VARIANT)
    code = DOWNLOAD.format(hub=str(hub.root), cache=str(cache), repo=repo, commit=commit,
                           variant=VARIANT)
    window = timed(lambda: python(code)) * 1.2
    injected = 0
    for _ in range(CONFIG.injections * 3):
        if injected >= CONFIG.injections:
            break
        old = None
        if final.is_dir():  # make the cached copy bad, so the next run downloads and replaces
            with open(final / "payload.bin", "r+b") as fh:
                fh.write(b"\xff")
            old = tree_hash(final)
        injected += run_and_kill(lambda: python(code), window)
        if final.is_dir():  # old (the damaged copy) or new (a verified one), never a mix
            try:
                verify_variant(final, "cache")
            except IntegrityError:
                assert tree_hash(final) == old
    INJECTED["download"] = injected
    assert injected >= CONFIG.injections // 2
    proc = python(code)  # the next command recovers by itself
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    verify_variant(final, "cache")
    assert staging_leftovers(cache) == []


# --- build (install step) ---------------------------------------------------------------------

INSTALL = """
import shutil
from pathlib import Path
from kernelkit.artifact.layout import seal_variant
from kernelkit.artifact.metadata import Metadata
from kernelkit.util.fs import recover_dir, remove_stale_siblings, replace_dir, temp_sibling
src, dest = Path({src!r}), Path({dest!r})
recover_dir(dest)
remove_stale_siblings(dest, ("building", "old"))
staging = temp_sibling(dest, "building")
shutil.copytree(src, staging)
seal_variant(staging, Metadata.read(staging / "metadata.json"))
replace_dir(staging, dest)
"""


def test_kill_during_build_install(tmp_path: Path) -> None:
    sources = [variant_tree(tmp_path / f"src{i}", factor=float(i), big=PAYLOAD)
               for i in (1, 2)]
    hashes = {tree_hash(s) for s in sources}
    dest = tmp_path / "project" / "build" / VARIANT
    codes = [INSTALL.format(src=str(s), dest=str(dest)) for s in sources]
    window = timed(lambda: python(codes[0])) * 1.2
    injected = 0
    for k in range(CONFIG.injections * 3):
        if injected >= CONFIG.injections:
            break
        injected += run_and_kill(lambda k=k: python(codes[k % 2]), window)
        # dest is always one whole tree: the first build's or the second's
        if dest.exists():
            assert tree_hash(dest) in hashes
            verify_variant(dest, "build")
        else:
            assert list(dest.parent.glob(f".{VARIANT}.old-*")), "both trees gone"
    INJECTED["build"] = injected
    assert injected >= CONFIG.injections // 2
    assert timed(lambda: python(codes[0])) >= 0
    assert tree_hash(dest) == tree_hash(sources[0])
    assert staging_leftovers(dest.parent) == []


# --- upload -----------------------------------------------------------------------------------


def test_kill_during_upload(tmp_path: Path) -> None:
    hub_dir, repo = tmp_path / "hub", "acme/up"
    roots = []
    for i in range(1, CONFIG.injections * 3 + 2):
        root = tmp_path / f"p{i}"
        roots.append(root)

    def start(i: int) -> Callable[[], subprocess.Popen[str]]:
        root = roots[i - 1]
        if not (root / "build").exists():
            variant_tree(root, version=i, factor=float(i), big=PAYLOAD // 2)
            (root / "build" / "CARD.md").write_text(f"# {i}\n")
        return lambda: kernelkit("upload", str(root), "--repo-id", repo, "--branch", f"v{i}",
                                 "--tag", f"v{i}.0.0", "--hub", str(hub_dir))

    window = timed(start(1)) * 1.2
    injected, i = 0, 1
    while injected < CONFIG.injections and i < len(roots) - 1:
        i += 1
        injected += run_and_kill(start(i), window)
        hub = LocalGitHub(hub_dir)
        refs = hub.list_refs(repo)
        for n in range(1, i + 1):  # never a branch without its tag, nor a tag without it
            assert (f"v{n}" in refs.branches) == (f"v{n}.0.0" in refs.tags), (n, refs)
            if f"v{n}" in refs.branches:
                assert refs.branches[f"v{n}"] == refs.tags[f"v{n}.0.0"]
                meta = hub.read_file(repo, refs.branches[f"v{n}"],
                                     f"build/{VARIANT}/metadata.json")
                assert meta is not None and json.loads(meta)["version"] == n
        git_fsck(hub.repo_path(repo))
    INJECTED["upload"] = injected
    assert injected >= CONFIG.injections // 2
    assert timed(start(len(roots))) >= 0  # the next upload works with no manual cleanup
    assert staging_leftovers(hub_dir) == []
    git_fsck(LocalGitHub(hub_dir).repo_path(repo))
