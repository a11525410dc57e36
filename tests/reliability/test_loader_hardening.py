"""Issue 24, the loader's items, and issue 28's one resolve path: each test is a reproduction
that used to succeed (or crash) and now fails closed, on real local git hubs and real
subprocess imports (synthetic pure-Python variants, one real compile for the op namespace).

3: a redirect to an untrusted repository; 4: a shared cache (modes, owners); 5: planted
bytecode; 8: recording many refs; 9: a long tag; 13: two builds sharing an op namespace.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kernelkit.errors import (
    ExitCode,
    LockError,
    OpNamespaceClashError,
    TrustError,
    UnsafeCacheError,
    exit_code,
)
from kernelkit.hub.local import LocalGitHub
from kernelkit.hub.port import Refs
from kernelkit.loader import api
from kernelkit.loader.cache import RepoCache
from tests.helpers import plant_bytecode
from tests.reliability.common import (
    CONFIG,
    VARIANT,
    child_env,
    publish_tree,
    variant_tree,
)

torch = pytest.importorskip("torch")


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    for var in ("LOCAL_KERNELS", "KERNELKIT_OFFLINE", "HF_HUB_OFFLINE",
                "KERNELKIT_TRUSTED_PUBLISHERS"):
        monkeypatch.delenv(var, raising=False)
    hub = LocalGitHub(tmp_path / "hub")
    monkeypatch.setenv("KERNELKIT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("KERNELKIT_HUB", str(hub.root))
    return {"hub": hub, "cache": tmp_path / "cache", "tmp": tmp_path}


def publish(w: dict[str, Any], repo: str, branch: str = "v1", **kwargs: Any) -> str:
    root = w["tmp"] / "trees" / os.urandom(4).hex()
    variant_tree(root, **kwargs)
    return publish_tree(w["hub"], repo, branch, root)


def redirect(w: dict[str, Any], repo: str, destination: str, revision: str = "v1") -> str:
    status = w["tmp"] / "kernel-status.toml"
    status.write_text(f'kind = "redirect"\ndestination = "{destination}"\n'
                      f'revision = "{revision}"\n')
    return w["hub"].publish(repo, "v1", {"kernel-status.toml": status})


def cache_of(w: dict[str, Any], repo: str) -> RepoCache:
    return RepoCache.of(w["cache"], repo, w["hub"].hub_identity)


def child(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter with this test's settings (and bytecode writing on,
    as for a user)."""
    full = child_env(**env)
    full.pop("PYTHONDONTWRITEBYTECODE", None)
    for var in ("KERNELKIT_CACHE", "KERNELKIT_HUB"):
        full.setdefault(var, os.environ[var])
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=full,
                          capture_output=True, text=True, timeout=600)


# --- 3. trust is decided on the repository whose code runs ---------------------------------


def test_a_redirect_to_an_untrusted_repository_needs_trust(
        world: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    publish(world, "evil/new", factor=9.0)
    redirect(world, "kernels-community/old", "evil/new")
    with pytest.raises(TrustError, match="evil/new"):  # used to load with only a warning
        api.get_kernel("kernels-community/old", version=1)
    assert not list(world["cache"].rglob(f"build/{VARIANT}"))  # nothing of evil/new fetched
    with pytest.warns(UserWarning, match="redirected to 'evil/new'"):
        module = api.get_kernel("kernels-community/old", version=1, trust_remote_code=True)
    assert torch.equal(module.scale(torch.ones(1)), torch.ones(1) * 9)
    [loaded] = [k for k in api.get_loaded_kernels() if k.module is module]
    assert loaded.repo_info is not None and loaded.repo_info.repo_id == "evil/new"
    monkeypatch.setenv("KERNELKIT_OFFLINE", "1")  # offline, from the recorded redirect
    with pytest.raises(TrustError, match="evil/new"):
        api.get_kernel("kernels-community/old", version=1)
    monkeypatch.setenv("KERNELKIT_TRUSTED_PUBLISHERS", "evil")
    with pytest.warns(UserWarning, match="redirected"):
        assert api.get_kernel("kernels-community/old", version=1) is module


def test_every_entry_point_follows_a_redirect(world: dict[str, Any]) -> None:
    """One resolve path (issue 28): get_kernel, install_kernel, has_kernel, the variant
    listing, `info` and `lock` all agree on where a redirect leads (`_rank`, behind has_kernel
    and get_kernel_variants, and `info` used to look at the source only)."""
    from kernelkit.lock.project import KernelDependency, resolve_lock
    from kernelkit.lock.report import hub_info

    commit = publish(world, "kernels-community/new", factor=3.0)
    redirect(world, "kernels-community/old", "kernels-community/new")
    repo = "kernels-community/old"
    with pytest.warns(UserWarning, match="redirected"):
        assert api.has_kernel(repo, version=1)
    with pytest.warns(UserWarning, match="redirected"):
        decisions = api.get_kernel_variants(repo, version=1)
    assert [d.variant for d in decisions if d.accepted] == [VARIANT]
    with pytest.warns(UserWarning, match="redirected"):
        path = api.install_kernel(repo, version=1)
    assert path == cache_of(world, "kernels-community/new").variant_dir(commit, VARIANT)
    with pytest.warns(UserWarning, match="redirected"):
        info = hub_info(world["hub"], repo)
    assert (info["repo_id"], info["redirected_from"], info["commit"]) == (
        "kernels-community/new", repo, commit)
    with pytest.warns(UserWarning, match="redirected"), \
            pytest.raises(LockError, match="redirects to kernels-community/new"):
        resolve_lock(world["hub"], KernelDependency(repo, 1))


# --- 4. a shared cache ---------------------------------------------------------------------

ENTRIES: dict[str, Callable[[RepoCache, str], Path]] = {
    "repository folder": lambda rc, c: rc.root,
    "commit folder": lambda rc, c: rc.commit_dir(c),
    "variant folder": lambda rc, c: rc.variant_dir(c, VARIANT),
    "a file of the variant": lambda rc, c: rc.variant_dir(c, VARIANT) / "__init__.py",
    "receipt": lambda rc, c: rc.receipt_path(c, VARIANT),
    "variants.json": lambda rc, c: rc.commit_dir(c) / "variants.json",
    "recorded refs": lambda rc, c: rc.listing_path(),
    "recorded redirect": lambda rc, c: rc.commit_dir(c) / "status.json",
}


@pytest.mark.parametrize("entry", sorted(ENTRIES))
@pytest.mark.parametrize("who", ["group", "others"])
def test_cache_entries_others_can_write_are_refused(world: dict[str, Any],
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    entry: str, who: str) -> None:
    repo = "kernels-community/shared"
    commit = publish(world, repo)
    api.get_kernel(repo, version=1)
    path = ENTRIES[entry](cache_of(world, repo), commit)
    mode = stat.S_IMODE(path.stat().st_mode)
    path.chmod(mode | (stat.S_IWGRP if who == "group" else stat.S_IWOTH))
    # online, a listing just written is not read: the hub lists again and replaces it whole
    for offline in ("1",) if entry == "recorded refs" else ("0", "1"):
        monkeypatch.setenv("KERNELKIT_OFFLINE", offline)
        with pytest.raises(UnsafeCacheError) as info:
            api.get_kernel(repo, version=1)
        assert info.value.path == str(path) and f"writable by {who}" in info.value.problem
        assert exit_code(info.value) == ExitCode.INTEGRITY
    path.chmod(mode)  # `chmod go-w`, as the hint says: loads again
    monkeypatch.setenv("KERNELKIT_OFFLINE", "0")
    api.get_kernel(repo, version=1)


@pytest.mark.skipif(os.geteuid() != 0,
                    reason="planting files as another user needs root (os.chown); the mode "
                           "rule is tested without it")
def test_a_variant_planted_by_another_user_never_runs(world: dict[str, Any]) -> None:
    """The reproduction: another user wrote a variant plus a matching receipt into a shared
    cache; the owner's next process ran it."""
    from kernelkit.loader.receipt import write_receipt

    repo = "kernels-community/planted"
    commit = publish(world, repo)
    load = f"import kernelkit; kernelkit.get_kernel({repo!r}, version=1)"
    assert child(load).returncode == 0
    rc = cache_of(world, repo)
    vdir = rc.variant_dir(commit, VARIANT)
    marker = world["tmp"] / "pwned"
    (vdir / "__init__.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    write_receipt(rc.receipt_path(commit, VARIANT), vdir, own_digest=None)  # it matches
    for path in [rc.commit_dir(commit), *rc.commit_dir(commit).rglob("*")]:
        os.chown(path, 4242, 4242, follow_symlinks=False)
    proc = child(load)
    assert proc.returncode != 0 and "UnsafeCacheError" in proc.stderr, proc.stderr
    assert "owned by uid 4242" in proc.stderr and not marker.exists()


def test_the_loader_never_writes_entries_others_can_write(world: dict[str, Any]) -> None:
    """Under the common 002 umask too (group-writable files and folders by default)."""
    repo = "kernels-community/umask"
    commit = publish(world, repo)
    code = f"""
        import os; os.umask(0o002)
        import kernelkit
        kernelkit.get_kernel({repo!r}, version=1)
        kernelkit.get_kernel({repo!r}, revision="v1")
        kernelkit.install_kernel({repo!r}, revision={commit!r})
        from kernelkit.loader.cache import RepoCache
        [root] = [RepoCache(p, {repo!r}, "") for p in __import__("pathlib").Path(
            {str(world["cache"])!r}).iterdir()]
        root.write_ref("resolved", "v1.0.0", {commit!r})  # the writer of names resolved online
    """
    proc = child(code)
    assert proc.returncode == 0, proc.stderr
    root = cache_of(world, repo).root
    writable = [p for p in [root, *root.rglob("*")]
                if p.lstat().st_mode & (stat.S_IWGRP | stat.S_IWOTH)]
    assert writable == [] and (root / "refs" / "resolved").is_dir() and (root / ".locks").is_dir()


@pytest.mark.skipif(os.geteuid() != 0, reason="reading as another user needs root (setuid)")
def test_a_cache_written_by_root_is_read_by_another_user(monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/security.md's shared cache: one writer (root), readers offline, read-only."""
    import tempfile

    base = Path(tempfile.mkdtemp(prefix="kk-shared-"))
    try:
        base.chmod(0o755)  # mkdtemp makes it private
        w = {"hub": LocalGitHub(base / "hub"), "cache": base / "cache", "tmp": base}
        monkeypatch.setenv("KERNELKIT_CACHE", str(w["cache"]))
        monkeypatch.setenv("KERNELKIT_HUB", str(w["hub"].root))
        repo = "kernels-community/ro"
        publish(w, repo)
        assert child(f"import kernelkit; kernelkit.get_kernel({repo!r}, version=1)"
                     ).returncode == 0
        code = (f"import kernelkit, torch; k = kernelkit.get_kernel({repo!r}, version=1); "
                "print(k.scale(torch.ones(1)).item())")
        try:
            proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                  env=child_env(KERNELKIT_OFFLINE="1",
                                                KERNELKIT_CACHE=str(w["cache"]),
                                                KERNELKIT_HUB=str(w["hub"].root)),
                                  user=65534, timeout=300)
        except PermissionError as exc:
            pytest.skip(f"this interpreter cannot be run by uid 65534 ({exc})")
        if proc.returncode != 0 and "PermissionError" in proc.stderr and \
                str(w["cache"]) not in proc.stderr:
            pytest.skip(f"this Python installation is not readable by uid 65534: "
                        f"{proc.stderr[-300:]}")
        assert proc.returncode == 0 and proc.stdout.strip() == "2.0", proc.stderr
    finally:
        shutil.rmtree(base, ignore_errors=True)


# --- 5. bytecode outside the digest ---------------------------------------------------------


@pytest.mark.parametrize("offline", ["0", "1"])
def test_planted_bytecode_never_runs(world: dict[str, Any], offline: str) -> None:
    repo = "kernels-community/pyc"
    commit = publish(world, repo)
    load = (f"import kernelkit, torch; k = kernelkit.get_kernel({repo!r}, version=1); "
            "print(k.scale(torch.ones(1)).item())")
    first = child(load)
    assert first.returncode == 0 and first.stdout.strip() == "2.0", first.stderr
    vdir = cache_of(world, repo).variant_dir(commit, VARIANT)
    assert not list(vdir.rglob("__pycache__"))  # kernels never write bytecode either
    marker = world["tmp"] / "pwned"
    evil = f"open({str(marker)!r}, 'w').close()\nscale = lambda x: x * 99\n"
    for source in (vdir / "__init__.py", vdir / "_ops.py"):  # header matches the source
        plant_bytecode(source, evil)
    again = child(load, KERNELKIT_OFFLINE=offline)
    assert again.returncode == 0 and again.stdout.strip() == "2.0", again.stderr
    assert not marker.exists()


# --- 8. recording refs, 9. long tags ----------------------------------------------------------


def test_recording_a_listing_writes_one_file_however_many_refs(tmp_path: Path) -> None:
    """It used to write one file per ref, each after a scan of the whole folder: quadratic
    (5k tags took 13 s on the first load, 100k did not finish in 12 minutes)."""
    from kernelkit.loader.offline import cached_refs, record_refs

    rc = RepoCache.of(tmp_path, "acme/many", "local:/hub")
    commit = "c" * 40
    (rc.commit_dir(commit)).mkdir(parents=True)
    for n in (10, 3000):
        refs = Refs(branches={"v1": commit}, tags={f"v1.0.{i}": commit for i in range(n)})
        record_refs(rc, refs)
        assert [p.name for p in (rc.root / "refs").rglob("*")] == ["listing.json"]
        assert cached_refs(rc) == refs


def _many_tags(hub: LocalGitHub, repo: str, commit: str, n: int) -> None:
    """``n`` release tags on ``commit``, written as git's own packed-refs file (creating 100k
    refs through git one by one would take longer than the load under test)."""
    lines = "".join(f"{commit} refs/tags/v1.{i // 1000}.{i % 1000}\n" for i in range(n))
    (hub.repo_path(repo) / "packed-refs").write_text(lines)


def test_a_repository_with_many_tags_loads_and_resolves_offline(world: dict[str, Any]) -> None:
    """100k tags in the full configuration, 10k in the small one (each loaded cold in a fresh
    process; the timings go to benchmarks/bench_refs.py, not here)."""
    repo = "kernels-community/tags"
    n = 100_000 if CONFIG.name == "full" else 10_000
    commit = publish(world, repo)
    _many_tags(world["hub"], repo, commit, n)
    assert len(world["hub"].list_refs(repo).tags) == n
    last = f"v1.{(n - 1) // 1000}.{(n - 1) % 1000}"
    code = f"""
        import time, kernelkit
        t = time.perf_counter()
        kernelkit.get_kernel({repo!r}, version=1)
        kernelkit.get_kernel({repo!r}, version=">=1.{(n - 1) // 1000}")
        print(round(time.perf_counter() - t, 2))
    """
    online = child(code)
    assert online.returncode == 0, online.stderr
    offline = child(f"import kernelkit; kernelkit.get_kernel({repo!r}, revision={last!r})",
                    KERNELKIT_OFFLINE="1")
    assert offline.returncode == 0, offline.stderr
    print(f"\n{n} tags: first load {online.stdout.strip()} s")


LONG_TAG = "v1.0.0+" + "+" * 193  # 200 characters, valid; percent-quoted: 589 bytes


def test_a_200_character_tag_breaks_nothing(world: dict[str, Any],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    repo = "kernels-community/longtag"
    commit = publish(world, repo)
    world["hub"].tag(repo, LONG_TAG, commit)
    assert len(LONG_TAG) == 200
    module = api.get_kernel(repo, version=1)  # used to raise OSError: File name too long
    assert api.get_kernel(repo, revision=LONG_TAG) is module  # recorded by name, bounded
    resolved = cache_of(world, repo).root / "refs" / "resolved"
    assert [len(p.name) <= 160 for p in resolved.iterdir()] == [True]
    monkeypatch.setenv("KERNELKIT_OFFLINE", "1")
    assert api.get_kernel(repo, revision=LONG_TAG) is module


# --- 13. two builds, one op namespace -------------------------------------------------------


def test_two_builds_sharing_an_op_namespace_raise_before_loading(
        world: dict[str, Any]) -> None:
    """The namespace is read from the extension's file name before anything is loaded (a
    dummy ``.so`` here: it is never opened; the compiled reproduction is below)."""
    hub_b = LocalGitHub(world["tmp"] / "hub-b")
    repo = "kernels-community/twice"
    uid = os.urandom(4).hex()[:7]
    trees = []
    for factor in (2.0, 5.0):  # one source tree (one namespace), two different builds
        root = world["tmp"] / "trees" / f"{factor}"
        vdir = variant_tree(root, factor=factor, uid=uid)
        (vdir / f"_demo_cpu_{uid}.abi3.so").write_bytes(b"not loaded")
        # The second build claims another metadata.id, so the loader's dedup by id (which
        # refuses a different build under one id: test_parity_loader) does not see the clash:
        # only the extension's file name tells, and it must be read before anything loads.
        _reseal(vdir, new_id=None if factor == 2.0 else f"_demo_cpu_{uid}_other")
        trees.append(root)
    commit_a = publish_tree(world["hub"], repo, "v1", trees[0])
    commit_b = publish_tree(hub_b, repo, "v1", trees[1])
    first = api.get_kernel(repo, version=1)
    with pytest.raises(OpNamespaceClashError) as info:
        api.get_kernel(repo, version=1, hub=hub_b)  # used to fail inside torch (or abort)
    assert info.value.namespace == f"_demo_cpu_{uid}"
    assert repo in info.value.loaded and repo in info.value.requested
    assert commit_a[:12] in info.value.loaded and commit_b[:12] in info.value.requested
    assert api.get_kernel(repo, version=1) is first  # the first one is untouched


def _reseal(vdir: Path, new_id: str | None = None) -> None:
    from kernelkit.artifact.layout import seal_variant
    from kernelkit.artifact.metadata import Metadata

    meta = Metadata.read(vdir / "metadata.json")
    changes: dict[str, Any] = {"digest": None} | ({"id": new_id} if new_id else {})
    seal_variant(vdir, Metadata(**{**meta.__dict__, **changes}))


@pytest.mark.slow
def test_two_compiled_builds_sharing_an_op_namespace_do_not_abort(
        world: dict[str, Any], img2gray_cpu_build: Path) -> None:
    """The reproduction: the same repository from two hubs, built twice from one source tree,
    loaded in one process: torch used to abort the interpreter (SIGABRT in TORCH_LIBRARY)."""
    repo = "kernels-community/img2gray-twice"
    hubs = [world["hub"], LocalGitHub(world["tmp"] / "hub-b")]
    for i, hub in enumerate(hubs):
        root = world["tmp"] / f"compiled-{i}"
        vdir = root / "build" / img2gray_cpu_build.name
        shutil.copytree(img2gray_cpu_build, vdir)
        with (vdir / "__init__.py").open("a") as fh:
            fh.write(f"\n# build {i}\n")  # a different build, the same namespace
        _reseal(vdir)
        publish_tree(hub, repo, "v1", root)
    code = f"""
        import kernelkit
        from kernelkit.errors import KernelIdConflictError, OpNamespaceClashError
        from kernelkit.hub.local import LocalGitHub
        kernelkit.get_kernel({repo!r}, version=1)
        try:
            kernelkit.get_kernel({repo!r}, version=1, hub=LocalGitHub({str(hubs[1].root)!r}))
        except OpNamespaceClashError as exc:
            print("refused:", exc.namespace)
        except KernelIdConflictError as exc:  # one id, one namespace: refused by the dedup
            print("refused:", exc.kernel_id)
    """
    proc = child(code)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    assert proc.stdout.startswith("refused: _img2gray_cpu_")


# --- issue 28: the warm version lookup --------------------------------------------------------


COUNTED = """
import subprocess, sys, time, torch
spawned = []
real = subprocess.Popen.__init__
def counting(self, *a, **k):
    spawned.append(a[0] if a else k.get("args"))
    real(self, *a, **k)
subprocess.Popen.__init__ = counting
import kernelkit
k = kernelkit.get_kernel({repo!r}, version=1)
print(k.scale(torch.ones(1)).item(), len(spawned))
"""


def test_a_warm_version_lookup_runs_no_process_and_sees_a_moved_branch(
        world: dict[str, Any]) -> None:
    repo = "kernels-community/warm"
    publish(world, repo, factor=2.0)
    time.sleep(2.1)  # older than the stamp's racy window (kernelkit.hub.refstamp.RACY_S)
    code = COUNTED.format(repo=repo)
    assert child(code).stdout.split()[0] == "2.0"  # cold: lists, downloads
    assert child(code).stdout.split() == ["2.0", "0"]  # warm: the stamped listing, no git
    publish(world, repo, factor=3.0)  # v1 moves
    assert child(code).stdout.split()[0] == "3.0"  # seen at once, not from the old listing
    time.sleep(2.1)
    assert child(code).stdout.split()[0] == "3.0"  # lists again if the last one was racy
    assert child(code).stdout.split() == ["3.0", "0"]


def test_metadata_json_is_read_once_per_warm_load(world: dict[str, Any]) -> None:
    repo = "kernels-community/once"
    publish(world, repo)
    code = f"""
        import sys
        opened = []
        sys.addaudithook(lambda event, args: opened.append(args[0])
                         if event == "open" and str(args[0]).endswith("metadata.json") else None)
        import kernelkit
        kernelkit.get_kernel({repo!r}, version=1)
        print(len(opened))
    """
    cold = child(code)
    assert cold.returncode == 0, cold.stderr
    assert cold.stdout.strip() == "2"  # verified when downloaded, then imported
    warm = child(code)  # a fresh process, everything cached: it used to read it three times
    assert warm.returncode == 0 and warm.stdout.strip() == "1", warm.stderr
