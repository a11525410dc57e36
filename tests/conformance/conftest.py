"""The conformance suite: kernelkit against the released upstream ``kernels`` 0.17.2 and 0.19.1,
both directions (their loader on our builds and lock files, ours on theirs).

Each upstream release lives in its own virtual environment (``tests/upstream_envs.py``),
created from the package index on first use and reused afterwards; the compiled kernel is the
session's img2gray build (``tests/conftest.py``). docs/compatibility.md's "kernels versions"
table names the test behind each of its rows.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conformance.support import REPO_ID, Served
from tests.hubserver import run_server
from tests.upstream_envs import UpstreamEnv, ensure_upstream_env


@pytest.fixture(scope="session")
def kernels_017(test_envs_dir: Path) -> UpstreamEnv:
    """kernels 0.17.2 in its own environment."""
    return ensure_upstream_env(test_envs_dir, "0.17.2")


@pytest.fixture(scope="session")
def kernels_019(test_envs_dir: Path) -> UpstreamEnv:
    """kernels 0.19.1 in its own environment."""
    return ensure_upstream_env(test_envs_dir, "0.19.1")


@pytest.fixture(scope="session", params=["0.17.2", "0.19.1"])
def upstream(request: pytest.FixtureRequest, test_envs_dir: Path) -> UpstreamEnv:
    """Each released upstream in turn."""
    return ensure_upstream_env(test_envs_dir, str(request.param))


@pytest.fixture(scope="session")
def served(img2gray_project: Path, img2gray_cpu_build: Path,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """With the sources `kernelkit upload` publishes (sources/<digest>.tar.gz on the branch
    kernelkit-sources): upstream's loaders must not trip over them."""
    from kernelkit.artifact.sources import SOURCES_BRANCH
    from kernelkit.hub.local import LocalGitHub
    from kernelkit.source_build.pack import pack_project

    root = tmp_path_factory.mktemp("conformance-hub")
    build = img2gray_cpu_build.parent
    files = {f"build/{p.relative_to(build).as_posix()}": p
             for p in sorted(img2gray_cpu_build.rglob("*"))
             if p.is_file() and "__pycache__" not in p.parts}
    sources = pack_project(img2gray_project, root / "sources")
    assert sources is not None
    LocalGitHub(root / "hub").publish(REPO_ID, SOURCES_BRANCH, {sources.repo_path: sources.path})
    commit = LocalGitHub(root / "hub").publish_tagged(REPO_ID, "v1", files, tag="v1.0.0")
    with run_server(root / "hub", root, "--trusted-publisher", "kernelkit-examples") as server:
        yield Served(server, commit)
