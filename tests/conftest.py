"""Session fixtures shared by the integration tests.

Compiles are expensive (a small CPU extension takes ~20-60 s here), so the img2gray example
is scaffolded and built once per test session and shared; tests that change a build copy it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ID = "kernelkit-examples/img2gray"


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
    from kernelkit.build.api import build

    results = build(img2gray_project, python=Path(sys.executable), backends=["cpu"])
    assert len(results) == 1
    return results[0].path
