"""Fixtures shared by the tests.

Every test runs with its own settings (:func:`isolated_settings`): none of the user's
``KERNELKIT_*`` variables, hub, cache or environments leak in, and nothing a test writes lands
in them. The suite's own knobs, ``KERNELKIT_TEST_*`` and ``KERNELKIT_UPDATE_GOLDEN``, stay.

Compiles are expensive (a small CPU extension takes ~20-60 s here), so the img2gray example
is scaffolded and built once per test session and shared; tests that change a build copy it.
Session fixtures run outside the per-test isolation (a function fixture cannot reach them);
each takes what it needs explicitly instead (``test_envs_dir``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO_ID = "kernelkit-examples/img2gray"

# Variables kernelkit (or upstream kernels) reads besides KERNELKIT_*: offline switches,
# overrides and credentials of the user's machine.
_FOREIGN_SETTINGS = ("HF_HUB_OFFLINE", "LOCAL_KERNELS", "DISABLE_KERNEL_MAPPING", "HF_TOKEN",
                     "HF_ENDPOINT")
_KEEP = ("KERNELKIT_TEST_", "KERNELKIT_UPDATE_GOLDEN")


@pytest.fixture(autouse=True)
def isolated_settings(monkeypatch: pytest.MonkeyPatch,
                      tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Fresh settings for each test: the user's KERNELKIT_* and offline/override variables are
    removed, and the hub, cache and build environments point at an empty temporary directory
    (subprocesses started with ``os.environ`` inherit the same)."""
    for name in list(os.environ):
        if (name.startswith("KERNELKIT_") and not name.startswith(_KEEP)) \
                or name in _FOREIGN_SETTINGS:
            monkeypatch.delenv(name)
    root = tmp_path_factory.mktemp("settings")
    monkeypatch.setenv("KERNELKIT_HUB_DIR", str(root / "hub"))
    monkeypatch.setenv("KERNELKIT_CACHE", str(root / "cache"))
    monkeypatch.setenv("KERNELKIT_ENVS", str(root / "envs"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(root / "config"))  # no user trust policy or key
    return root


@pytest.fixture(scope="session")
def web_hub(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The hub the web-page tests serve (``tests/webhub.py``: real uploads, a real benchmark
    run, a hostile repository, a private one), built once; tests only read it."""
    from tests.webhub import build_demo_hub

    return build_demo_hub(tmp_path_factory.mktemp("web-hub"))


@pytest.fixture(scope="session")
def img2gray_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh `kernelkit init` img2gray project (cpu + cuda), committed to git."""
    from kernelkit.scaffold import init_project

    project = tmp_path_factory.mktemp("e2e") / "img2gray"
    init_project(project, name=REPO_ID, backends=["cpu", "cuda"])
    if shutil.which("git") and (project / ".git").is_dir():
        ident = ["-c", "user.name=t", "-c", "user.email=t@example.invalid"]
        subprocess.run(["git", "-C", str(project), "add", "-A"], check=True)
        subprocess.run(["git", "-C", str(project), *ident, "commit", "-qm", "init"], check=True)
    return project


@pytest.fixture(scope="session")
def img2gray_cpu_build(img2gray_project: Path) -> Path:
    """`kernelkit build` of the img2gray project for this interpreter's (CPU) torch.

    Returns the variant directory ``build/torch<XY>-cxx11-cpu-x86_64-linux``."""
    from kernelkit.builder.api import build

    results = build(img2gray_project, python=Path(sys.executable), backends=["cpu"])
    assert len(results) == 1
    return results[0].path


CUDA_VARIANT = "torch214-cxx11-cu130-x86_64-linux"


@pytest.fixture(scope="session")
def test_envs_dir() -> Path:
    """Where tests keep pinned build environments between runs (they take minutes to create):
    ``KERNELKIT_TEST_ENVS``, else ``~/.cache/kernelkit/test-envs``."""
    import os

    keep = os.environ.get("KERNELKIT_TEST_ENVS")
    path = Path(keep) if keep else Path.home() / ".cache" / "kernelkit" / "test-envs"
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="session")
def cuda_torch_python(test_envs_dir: Path) -> Path:
    """The interpreter of kernelkit's own pinned build environment for the CUDA 13.0 variant
    (torch 2.14.1+cu130, ~5.5 GB from this machine's local wheels; created once and reused).

    ``KERNELKIT_TEST_CUDA_PYTHON`` may name another CUDA torch interpreter instead."""
    import os

    from kernelkit.builder.toolchain.envs import ensure_env, env_spec
    from kernelkit.builder.toolchain.toolkit import find_cuda_toolkit
    from kernelkit.manifest import load_manifest
    from kernelkit.variants.matrix import targets_for

    given = os.environ.get("KERNELKIT_TEST_CUDA_PYTHON")
    if given:
        return Path(given)
    if find_cuda_toolkit() is None:
        pytest.skip("no nvcc on this machine: the CUDA build environment cannot be used")
    manifest = load_manifest(Path(__file__).parent / "data" / "projects" / "addone")
    [target] = [t for t in targets_for(manifest) if t.variant == CUDA_VARIANT]
    env = ensure_env(env_spec(target), test_envs_dir)
    return env.python
