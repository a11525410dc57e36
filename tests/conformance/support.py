"""What the conformance tests share: the img2gray check every tool runs, fresh kernelkit
processes, copies of the session build, and the served hub."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.hubserver import HubServer

REPO_ID = "kernelkit-examples/img2gray"

#: Loads img2gray with whatever ``get`` returns and checks it against the reference; prints
#: ``CONFORMANCE-OK <module file>``. Run by every tool's interpreter.
CHECK_IMG2GRAY = """
import sys, torch
def check(k):
    img = torch.randint(0, 256, (3, 17, 9, 3), dtype=torch.uint8,
                        generator=torch.Generator().manual_seed(0))
    x = img.to(torch.float32)
    ref = ((x[..., 0] * 0.299 + x[..., 1] * 0.587 + x[..., 2] * 0.114) + 0.5).to(torch.uint8)
    assert torch.equal(k.img2gray(img), ref)
    print("CONFORMANCE-OK", k.__file__)
"""


def kernelkit_run(code: str, env: dict[str, str] | None = None,
                  cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``code`` in a fresh kernelkit interpreter (the suite's own; never imports upstream)."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=dict(env if env is not None else os.environ), cwd=cwd,
                          timeout=300)


def kernelkit_cli(*args: str, env: dict[str, str] | None = None
                  ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kernelkit", *args], capture_output=True,
                          text=True, env=dict(env if env is not None else os.environ),
                          timeout=300)


def copy_variant(variant_dir: Path, dest_build: Path, name: str | None = None) -> Path:
    """A copy of a built variant under ``dest_build`` (renamed to ``name``)."""
    target = dest_build / (name or variant_dir.name)
    shutil.copytree(variant_dir, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


@dataclass(frozen=True)
class Served:
    """``kernelkit serve`` over a hub holding the session's img2gray build as ``v1``."""

    server: HubServer
    commit: str

    def env(self, tmp: Path, **extra: str) -> dict[str, str]:
        """A client environment: Hub API at the server, fresh caches under ``tmp``."""
        return self.server.env(None, HF_HOME=str(tmp / "hf-home"),
                               KERNELS_CACHE=str(tmp / "kernels-cache"),
                               KERNELKIT_CACHE=str(tmp / "kk-cache"), KERNELKIT_HUB="hf",
                               **extra)


