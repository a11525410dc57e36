"""A variant no published one fits, built here from the published sources (issue 29).

img2gray is published only under another torch's variant name (``torch212-...``: this suite's
torch is 2.13), with its sources, by ``kernelkit upload``'s own code. Off, ``get_kernel``
refuses; on, it builds the torch 2.13 variant from the verified sources, checks it, caches it
and loads it: eight processes build it once, a second load builds nothing, a lock pins the
sources it builds from, offline it builds from the cached sources; tampered sources and a
machine that cannot build are refused before anything is built (or downloaded). The same in
the CUDA test environment (torch 2.14) is ``test_torch_2_14_environment_builds_what_2_13_
published``. Compiles reuse the session's (ccache), so each costs a configure and a link.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from kernelkit.artifact.sources import SOURCES_BRANCH, SourceArchive, write_archive
from kernelkit.errors import IntegrityError, NotBuildableError, VariantNotFoundError
from kernelkit.hub.local import LocalGitHub
from kernelkit.loader.cache import RepoCache
from tests.helpers import git, make_variant, publish_build, run_cli
from tests.source_build_support import (
    LOAD_IMG2GRAY,
    REPO,
    SRC,
    publish,
    run_loader,
    this_python,
    tools_path,
)

pytest.importorskip("torch")

OTHER = "torch212-cxx11-cpu-x86_64-linux"  # published: a torch this suite does not have
HERE = "torch213-cxx11-cpu-x86_64-linux"  # what a build here makes
BUILDING = "; building torch213"  # the stage line of the one process that builds


@pytest.fixture(scope="module")
def published(img2gray_project: Path, img2gray_cpu_build: Path,
              tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("build-missing")
    commit, archive = publish(tmp / "hub", img2gray_project, img2gray_cpu_build,
                              as_variant=OTHER, tmp=tmp)
    return {"hub": tmp / "hub", "commit": commit, "archive": archive, "tmp": tmp}


def _env(pub: dict[str, Any], cache: Path, **extra: str) -> dict[str, str]:
    return {"KERNELKIT_HUB": str(pub["hub"]), "KERNELKIT_CACHE": str(cache),
            "KERNELKIT_TRUSTED_PUBLISHERS": "kernelkit-examples", **extra}


def _rc(pub: dict[str, Any], cache: Path) -> RepoCache:
    return RepoCache.of(cache, REPO, LocalGitHub(pub["hub"]).hub_identity)


def test_upload_publishes_the_sources_the_variants_record(img2gray_project: Path,
                                                          img2gray_cpu_build: Path,
                                                          tmp_path: Path) -> None:
    """`kernelkit upload` of a project publishes sources/<digest>.tar.gz on the branch
    kernelkit-sources (the version branch holds build/ only, as upstream's loaders need): the
    digest every variant records; `--no-sources` does not; a variant built from other sources
    is named and its sources are not published."""
    project = tmp_path / "img2gray"
    shutil.copytree(img2gray_project, project, symlinks=True)
    hub = tmp_path / "hub"
    out = run_cli("upload", str(project), "--repo-id", "acme/a", "--hub", str(hub))
    assert out.returncode == 0, out.stderr
    meta = json.loads(next((project / "build").glob("*/metadata.json")).read_text())
    record = meta["provenance"]["kernelkit"]["sources"]
    digest = record["digest"]
    head = git(img2gray_project, "rev-parse", "HEAD")
    assert record["commit"] == head and record["files"] > 0  # the commit it came from
    assert f"sources:  {digest}" in out.stdout and "warning" not in out.stderr
    local = LocalGitHub(hub)
    assert local.list_files("acme/a", local.resolve("acme/a", "v1"), "sources") == []
    [entry] = local.list_files("acme/a", local.resolve("acme/a", SOURCES_BRANCH), "sources")
    assert entry.path == f"sources/{digest.removeprefix('sha256:')}.tar.gz"

    out = run_cli("upload", str(project), "--repo-id", "acme/b", "--hub", str(hub),
                  "--no-sources")
    assert out.returncode == 0 and "sources:" not in out.stdout
    assert SOURCES_BRANCH not in local.list_refs("acme/b").branches

    (project / "img2gray_cpu" / "img2gray_cpu.cpp").write_text("// changed since the build\n")
    out = run_cli("upload", str(project), "--repo-id", "acme/c", "--hub", str(hub))
    assert out.returncode == 0 and "sources:" not in out.stdout
    assert "was built from sources sha256:" in out.stderr and "rebuild" in out.stderr
    assert SOURCES_BRANCH not in local.list_refs("acme/c").branches


def test_off_a_missing_variant_is_refused_saying_how_to_build_it(
        published: dict[str, Any], tmp_path: Path) -> None:
    import kernelkit

    with pytest.raises(VariantNotFoundError) as err:
        kernelkit.get_kernel(REPO, version=1, hub=LocalGitHub(published["hub"]),
                             cache_dir=tmp_path / "cache", trust_remote_code=True)
    text = str(err.value)
    assert f"{OTHER}: Torch version (2.12) does not match environment Torch version (2.13)" in text
    assert "build_missing=True" in text and "KERNELKIT_BUILD_MISSING=1" in text


def test_tampered_sources_are_refused(img2gray_project: Path, img2gray_cpu_build: Path,
                                      tmp_path: Path) -> None:
    """An archive published under the digest the variants record, one byte changed: refused
    with IntegrityError, nothing built, nothing cached."""
    import kernelkit

    project = tmp_path / "img2gray"
    shutil.copytree(img2gray_project, project, symlinks=True)
    from kernelkit.source_build.pack import pack_project

    honest = pack_project(img2gray_project, tmp_path / "honest")
    assert honest is not None
    kernel = project / "img2gray_cpu" / "img2gray_cpu.cpp"
    kernel.write_text(kernel.read_text().replace("0.299", "0.300"))
    from kernelkit.builder.caches.build_cache import source_files
    from kernelkit.manifest import load_manifest

    manifest = load_manifest(project)
    bad = write_archive(project, source_files(manifest), tmp_path / "bad")
    publish(tmp_path / "hub", img2gray_project, img2gray_cpu_build, as_variant=OTHER,
            tmp=tmp_path, sources=SourceArchive(bad.path, honest.digest, bad.files))
    cache = tmp_path / "cache"
    with pytest.raises(IntegrityError) as err:
        kernelkit.install_kernel(REPO, version=1, hub=LocalGitHub(tmp_path / "hub"),
                                 cache_dir=cache, build_missing=True, trust_remote_code=True)
    assert err.value.expected == honest.digest and "tampered" in str(err.value)
    rc = RepoCache.of(cache, REPO, LocalGitHub(tmp_path / "hub").hub_identity)
    assert not list(rc.root.glob("*/local/*")) and not list(rc.root.glob("sources/*"))


def test_what_cannot_be_built_here_is_refused_before_any_download(
        published: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No C compiler: one line naming it and what to install, and neither the sources nor
    their digest were fetched. A kernel published for another backend only: the project's
    limitation, said so."""
    import kernelkit

    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    cache = tmp_path / "cache"
    with pytest.raises(NotBuildableError) as err:
        kernelkit.install_kernel(REPO, version=1, hub=LocalGitHub(published["hub"]),
                                 cache_dir=cache, build_missing=True, trust_remote_code=True)
    assert err.value.who == "machine" and "\n" not in err.value.message
    assert f"CC={tmp_path / 'no-such-cc'} is not an executable" in err.value.message
    rc = _rc(published, cache)
    assert not list(rc.root.glob("*/sources.json")) and not (rc.root / "sources").exists()
    monkeypatch.delenv("CC")

    build = tmp_path / "cuda-only" / "build"
    make_variant(build, "torch213-cxx11-cu130-x86_64-linux")
    hub = LocalGitHub(tmp_path / "hub2")
    publish_build(hub, "acme/cuda-only", "v1", build)
    with pytest.raises(NotBuildableError) as err:
        kernelkit.install_kernel("acme/cuda-only", version=1, hub=hub, cache_dir=cache,
                                 build_missing=True, trust_remote_code=True)
    assert err.value.who == "project"
    assert "publishes cuda variants only, so its sources build no cpu variant" in str(err.value)


def test_an_untrusted_publisher_is_refused_before_anything_is_built(
        published: dict[str, Any], tmp_path: Path) -> None:
    import kernelkit
    from kernelkit.errors import TrustError

    for call in (kernelkit.get_kernel, kernelkit.install_kernel):
        with pytest.raises(TrustError):
            call(REPO, version=1, hub=LocalGitHub(published["hub"]),
                 cache_dir=tmp_path / "cache", build_missing=True)
    assert not list((tmp_path / "cache").glob("*/*/local"))


def test_variants_and_info_say_what_would_be_built(published: dict[str, Any],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    digest = published["archive"].digest
    out = run_cli("variants", REPO, "--hub", str(published["hub"]))
    assert out.returncode == 1
    assert (f"Build from source: {HERE} would be built from sources {digest} (no published "
            "variant fits torch 2.13") in out.stdout
    assert "the fallback is off; turn it on with build_missing=True" in out.stdout
    monkeypatch.setenv("KERNELKIT_BUILD_MISSING", "1")
    out = run_cli("variants", REPO, "--hub", str(published["hub"]), "--json")
    build = json.loads(out.stdout)["revisions"][0]["build"]
    assert build == {"buildable": True, "variant": HERE, "reason": build["reason"],
                     "sources": digest, "enabled": True, "built": None}
    monkeypatch.setenv("CC", "/no/such/cc")
    out = run_cli("info", REPO, "--hub", str(published["hub"]), "--json")
    build = json.loads(out.stdout)["build"]
    assert build["buildable"] is False and "CC=/no/such/cc is not an executable" in build["reason"]


# --- real builds ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def built_by_eight(published: dict[str, Any]) -> dict[str, Any]:
    """Eight fresh processes start together with KERNELKIT_BUILD_MISSING=1 on one cache."""
    cache = published["tmp"] / "cache-eight"
    ready = published["tmp"] / "ready"
    ready.mkdir()
    code = (f"import os, sys, time\nimport torch\nopen(os.path.join({str(ready)!r}, "
            "sys.argv[2]), 'w').close()\nwhile len(os.listdir("
            f"{str(ready)!r})) < 8: time.sleep(0.01)\n")
    env = {**os.environ, **_env(published, cache, KERNELKIT_BUILD_MISSING="1")}
    procs = [subprocess.Popen([this_python(), "-c", code + LOAD_IMG2GRAY, '{"version": 1}', str(i)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=env) for i in range(8)]
    outs = [p.communicate(timeout=900) for p in procs]
    return {"cache": cache, "outs": outs, "codes": [p.returncode for p in procs]}


@pytest.mark.slow
def test_eight_processes_build_it_once(published: dict[str, Any],
                                       built_by_eight: dict[str, Any]) -> None:
    outs, codes = built_by_eight["outs"], built_by_eight["codes"]
    assert codes == [0] * 8, [o[0] + o[1][-2000:] for o in outs]
    files = {line.split(" ", 1)[1] for out, _ in outs for line in out.splitlines()
             if line.startswith("LOADED ")}
    rc = _rc(published, built_by_eight["cache"])
    final = rc.local_variant_dir(published["commit"], HERE)
    assert files == {str(final / "__init__.py")}
    logs = "".join(err for _, err in outs)
    assert logs.count(BUILDING) == 1, logs[-4000:]
    assert logs.count("built torch213-cxx11-cpu-x86_64-linux of") == 1
    assert "waiting for another process that is building" in logs
    meta = json.loads((final / "metadata.json").read_text())
    assert meta["provenance"]["kernelkit"]["built-locally"] == {
        "repo-id": REPO, "commit": published["commit"], "hub": rc.hub,
        "sources": published["archive"].digest}
    assert meta["digest"]  # its own digest, verified at every load as a download's


@pytest.mark.slow
def test_a_second_load_builds_nothing(published: dict[str, Any],
                                      built_by_eight: dict[str, Any]) -> None:
    env = _env(published, built_by_eight["cache"], KERNELKIT_BUILD_MISSING="1")
    started = time.monotonic()
    out = run_loader(this_python(), json.dumps({"version": 1}), env)
    assert out.returncode == 0 and "LOADED" in out.stdout, out.stderr[-2000:]
    assert "kernelkit.source_build" not in out.stderr, out.stderr
    assert time.monotonic() - started < 60


@pytest.mark.slow
def test_the_cache_lists_what_was_built_here(published: dict[str, Any],
                                             built_by_eight: dict[str, Any]) -> None:
    out = run_cli("cache", "ls", "--cache-dir", str(built_by_eight["cache"]), "--json")
    [repo] = json.loads(out.stdout)["repos"]
    [revision] = repo["revisions"]
    assert [(v["variant"], v["built_locally"], v["verified"]) for v in revision["variants"]] == [
        (HERE, True, True)]
    text = run_cli("cache", "ls", "--cache-dir", str(built_by_eight["cache"])).stdout
    assert f"{HERE} (built here)" in text


@pytest.mark.slow
def test_the_lock_pins_the_sources(published: dict[str, Any], built_by_eight: dict[str, Any],
                                   tmp_path: Path) -> None:
    """`kernelkit lock` records the sources digest (kernels.lock.hashes); a locked load uses
    the variant built from those sources; a lock pinning other bytes builds only from those
    (refused here: the commit has no such sources), one pinning none refuses to build."""
    project = tmp_path / "app"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        f'[project]\nname = "app"\n\n[tool.kernels.dependencies]\n"{REPO}" = 1\n')
    assert run_cli("lock", str(project), "--hub", str(published["hub"])).returncode == 0
    side = json.loads((project / "kernels.lock.hashes").read_text())
    assert side["kernels"][REPO]["sources"] == published["archive"].digest
    assert "sources" not in (project / "kernels.lock").read_text()

    env = _env(published, built_by_eight["cache"])
    args = json.dumps({"loader": "get_locked_kernel", "lockfile": str(project),
                       "build_missing": True})
    out = run_loader(this_python(), args, env)
    assert out.returncode == 0, out.stdout + out.stderr[-2000:]
    assert f"/local/{HERE}/__init__.py" in out.stdout and BUILDING not in out.stderr
    down = run_cli("download", str(project), "--build-missing", "--hub", str(published["hub"]),
                   "--dest", str(built_by_eight["cache"]))
    assert down.returncode == 0, down.stderr
    assert f"({HERE}) -> " in down.stderr and f"/local/{HERE}" in down.stderr

    other = "sha256:" + "0" * 64
    side["kernels"][REPO]["sources"] = other
    (project / "kernels.lock.hashes").write_text(json.dumps(side))
    out = run_loader(this_python(), args, env)
    assert out.returncode == 3 and "NotBuildableError" in out.stdout
    assert (f"built from sources {other}, but the repository's {SOURCES_BRANCH} branch has "
            f"no sources/{'0' * 64}.tar.gz") in out.stdout

    del side["kernels"][REPO]["sources"]
    (project / "kernels.lock.hashes").write_text(json.dumps(side))
    out = run_loader(this_python(), args, env)
    assert out.returncode == 3
    assert "kernels.lock pins it without the digest of its sources" in out.stdout
    assert "kernelkit lock --refresh" in out.stdout


@pytest.mark.slow
def test_a_build_the_check_refuses_is_not_cached(img2gray_project: Path,
                                                 tmp_path: Path) -> None:
    """The variant built here goes through `kernelkit check` before it is cached: sources
    whose package fails to import compile fine, the check refuses them, and nothing is
    cached (nothing loaded)."""
    import kernelkit
    from kernelkit.builder.api import build
    from kernelkit.errors import BuildError

    project = tmp_path / "img2gray"
    shutil.copytree(img2gray_project, project, symlinks=True)
    init = project / "torch-ext" / "img2gray" / "__init__.py"
    init.write_text(init.read_text() + "\nraise ImportError('broken on purpose')\n")
    [variant] = build(project, python=Path(sys.executable), backends=["cpu"])
    publish(tmp_path / "hub", project, variant.path, as_variant=OTHER, tmp=tmp_path)
    cache = tmp_path / "cache"
    with pytest.raises(BuildError) as err:
        kernelkit.install_kernel(REPO, version=1, hub=LocalGitHub(tmp_path / "hub"),
                                 cache_dir=cache, build_missing=True, trust_remote_code=True)
    assert "`kernelkit check` refused the build of" in str(err.value)
    assert "import-failed" in str(err.value)
    assert "nothing was cached" in (err.value.hint or "")
    rc = RepoCache.of(cache, REPO, LocalGitHub(tmp_path / "hub").hub_identity)
    assert not list(rc.root.glob("*/local/*"))


@pytest.mark.slow
def test_offline_it_builds_from_the_cached_sources(published: dict[str, Any],
                                                    built_by_eight: dict[str, Any],
                                                    tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    shutil.copytree(built_by_eight["cache"], cache, symlinks=True)
    rc = _rc(published, cache)
    shutil.rmtree(rc.commit_dir(published["commit"]) / "local")
    env = _env(published, cache, KERNELKIT_OFFLINE="1")
    off = run_loader(this_python(), json.dumps({"version": 1}), env)
    assert off.returncode == 3 and "VariantNotFoundError" in off.stdout
    out = run_loader(this_python(), json.dumps({"version": 1, "build_missing": True}), env)
    assert out.returncode == 0, out.stdout + out.stderr[-3000:]
    assert BUILDING in out.stderr and "downloading the sources" not in out.stderr
    shutil.rmtree(rc.root / "sources")
    shutil.rmtree(rc.commit_dir(published["commit"]) / "local")
    out = run_loader(this_python(), json.dumps({"version": 1, "build_missing": True}), env)
    assert out.returncode == 3 and "OfflineError" in out.stdout
    assert "are not in the cache" in out.stdout


@pytest.mark.slow
@pytest.mark.cuda_build
def test_torch_2_14_environment_builds_what_2_13_published(
        img2gray_project: Path, img2gray_cpu_build: Path, cuda_torch_python: Path,
        tmp_path: Path) -> None:
    """The issue's case: published for torch 2.13 only, loaded where torch is 2.14 (the CUDA
    test environment, its CPU variant). Without the build extra there it is refused before any
    download, naming what to install; off it is refused as upstream does; on it is built."""
    commit, archive = publish(tmp_path / "hub", img2gray_project, img2gray_cpu_build,
                              as_variant=img2gray_cpu_build.name, tmp=tmp_path)
    cache = tmp_path / "cache"
    base = {"KERNELKIT_HUB": str(tmp_path / "hub"), "KERNELKIT_CACHE": str(cache),
            "KERNELKIT_TRUSTED_PUBLISHERS": "kernelkit-examples"}
    bare = run_loader(cuda_torch_python, json.dumps({"version": 1, "backend": "cpu",
                                                     "build_missing": True}),
                      {**base, "PYTHONPATH": os.pathsep.join([SRC, str(tools_path(
                          tmp_path / "deps-only", only=("packaging",)))])})
    assert bare.returncode == 3 and "NotBuildableError" in bare.stdout, bare.stderr[-2000:]
    assert "cmake is not installed; pip install 'kernelkit[build]'" in bare.stdout
    assert not list(cache.glob("*/sources")) and not list(cache.glob("*/*/sources.json"))

    env = {**base, "PYTHONPATH": os.pathsep.join([SRC, str(tools_path(tmp_path / "tools"))])}
    off = run_loader(cuda_torch_python, json.dumps({"version": 1, "backend": "cpu"}), env)
    assert off.returncode == 3 and "VariantNotFoundError" in off.stdout
    assert "Torch version (2.13) does not match environment Torch version (2.14)" in off.stdout
    on = run_loader(cuda_torch_python, json.dumps({"version": 1, "backend": "cpu",
                                                   "build_missing": True}), env)
    assert on.returncode == 0, on.stdout + on.stderr[-4000:]
    built = "torch214-cxx11-cpu-x86_64-linux"
    assert f"/{commit}/local/{built}/__init__.py" in on.stdout
    assert f"building {built} from its sources {archive.digest[:19]}" in on.stderr
    assert sys.executable != str(cuda_torch_python)


def test_the_hub_api_carries_the_sources(img2gray_project: Path, img2gray_cpu_build: Path,
                                         tmp_path: Path) -> None:
    """Through the Hugging Face Hub API (a real `kernelkit serve`): upload creates the
    kernelkit-sources branch, and the loader fetches and verifies the archive from it."""
    from kernelkit.hub.hf import HuggingFaceHub
    from kernelkit.loader.install import LazyHub
    from kernelkit.loader.sources import unpack_sources
    from tests.hubserver import WRITE_TOKEN, run_server

    with run_server(tmp_path / "hub", tmp_path) as server:
        hub = HuggingFaceHub(token=WRITE_TOKEN, endpoint=server.url)
        commit, archive = publish(hub, img2gray_project, img2gray_cpu_build, as_variant=OTHER,
                                  tmp=tmp_path)
        assert SOURCES_BRANCH in hub.list_refs(REPO).branches
        assert not [e for e in hub.list_files(REPO, commit) if not e.path.startswith("build/")]
        rc = RepoCache.of(tmp_path / "cache", REPO, hub.hub_identity)
        count = unpack_sources(LazyHub(hub, lambda: hub), rc, commit, archive.digest,
                               tmp_path / "tree", offline=False)
    assert count == archive.files and (tmp_path / "tree" / "build.toml").is_file()
    assert rc.sources_archive(archive.path.name).is_file()  # cached once verified


def _another_torch(variant: str) -> str:
    """``variant`` under another torch's name (the GPU machine's torch may be any)."""
    tag, rest = variant.split("-", 1)
    return f"{'torch212' if tag == 'torch213' else 'torch213'}-{rest}"


@pytest.mark.slow
@pytest.mark.cuda_build
@pytest.mark.gpu
def test_on_a_gpu_the_cuda_variant_is_built_for_its_capability(
        img2gray_project: Path, cuda_torch_python: Path, tmp_path: Path) -> None:
    """The CUDA variant, published under another torch's name, is built here for this GPU's
    capability only, and runs on it."""
    code = ("import torch, json; print(json.dumps(torch.cuda.get_device_capability() "
            "if torch.cuda.is_available() else None))")
    probe = subprocess.run([str(cuda_torch_python), "-c", code], capture_output=True, text=True,
                           timeout=300)
    cap = json.loads(probe.stdout.strip().splitlines()[-1])
    if cap is None:
        pytest.skip("no CUDA device visible")
    from kernelkit.builder.api import build

    project = tmp_path / "img2gray"
    shutil.copytree(img2gray_project, project, symlinks=True)
    [cuda] = build(project, python=cuda_torch_python, backends=["cuda"],
                   cuda_capabilities=[f"{cap[0]}.{cap[1]}"])
    commit, archive = publish(tmp_path / "hub", project, cuda.path,
                              as_variant=_another_torch(cuda.variant),
                              tmp=tmp_path)
    assert archive.digest == cuda.metadata.provenance.extra["sources"]["digest"]
    env = {"KERNELKIT_HUB": str(tmp_path / "hub"), "KERNELKIT_CACHE": str(tmp_path / "cache"),
           "KERNELKIT_TRUSTED_PUBLISHERS": "kernelkit-examples",
           "PYTHONPATH": os.pathsep.join([SRC, str(tools_path(tmp_path / "tools"))])}
    out = run_loader(cuda_torch_python, json.dumps({"version": 1, "build_missing": True,
                                                    "device": "cuda"}), env)
    assert out.returncode == 0, out.stdout + out.stderr[-4000:]
    built = Path(out.stdout.split("LOADED ", 1)[1].strip()).parent
    assert built.name == cuda.variant and built.parent.parent.name == commit
    meta = json.loads((built / "metadata.json").read_text())
    assert meta["backend"]["archs"] == [f"{cap[0]}.{cap[1]}"]
    assert f"for CUDA capabilities {cap[0]}.{cap[1]}" in out.stderr
