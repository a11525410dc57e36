"""Released upstream ``kernels`` packages, each in its own virtual environment, for the
conformance suite (``tests/conformance/``).

One environment per pinned version (``UPSTREAM_VERSIONS``), created on first use from the
package index (``kernels==X`` and the test interpreter's exact ``torch``), kept under the test
environments directory (``KERNELKIT_TEST_ENVS``, else ``~/.cache/kernelkit/test-envs``) and
reused by every later run: creating one takes about a minute, reusing it nothing.

An environment is complete when its stamp file exists; one without a stamp (an interrupted
creation) is removed and made again. A file lock keeps two test processes from creating the
same one at once.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

#: The released upstream versions the conformance suite runs against.
UPSTREAM_VERSIONS = ("0.17.2", "0.19.1")
_STAMP = ".kernelkit-upstream-env"


@dataclass(frozen=True)
class UpstreamEnv:
    """One upstream ``kernels`` release in its own environment."""

    version: str
    python: Path

    def run(self, code: str, *, env: Mapping[str, str] | None = None, cwd: Path | None = None,
            timeout: float = 300) -> subprocess.CompletedProcess[str]:
        """Run ``code`` with this environment's interpreter; never raises on failure."""
        return subprocess.run([str(self.python), "-c", code], capture_output=True, text=True,
                              env=dict(env if env is not None else os.environ), cwd=cwd,
                              timeout=timeout)

    def run_stdin(self, code: str, stdin: str, *, env: Mapping[str, str] | None = None,
                  timeout: float = 300) -> subprocess.CompletedProcess[str]:
        """Run ``code`` with ``stdin`` as its standard input."""
        return subprocess.run([str(self.python), "-c", code], input=stdin, capture_output=True,
                              text=True, env=dict(env if env is not None else os.environ),
                              timeout=timeout)

    def cli(self, *args: str, env: Mapping[str, str] | None = None, cwd: Path | None = None,
            timeout: float = 300) -> subprocess.CompletedProcess[str]:
        """Upstream's ``kernels`` command (its console script, by path)."""
        exe = self.python.parent / "kernels"
        return subprocess.run([str(exe), *args], capture_output=True, text=True,
                              env=dict(env if env is not None else os.environ), cwd=cwd,
                              timeout=timeout)


def _torch_requirement() -> str:
    import torch

    return f"torch=={torch.__version__}"


def env_dir(root: Path, version: str) -> Path:
    """``kernels-<version>-<key>``: the key changes with the interpreter and torch it pins."""
    key = hashlib.sha256(
        f"{version}\0{sys.version_info[:2]}\0{_torch_requirement()}".encode()).hexdigest()[:12]
    return root / f"kernels-{version}-{key}"


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def ensure_upstream_env(root: Path, version: str) -> UpstreamEnv:
    """The environment of ``kernels==version`` under ``root``, created if missing."""
    target = env_dir(root, version)
    python = target / "bin" / "python"
    with _locked(target.with_name(target.name + ".lock")):
        if (target / _STAMP).is_file():
            return UpstreamEnv(version, python)
        shutil.rmtree(target, ignore_errors=True)
        base = getattr(sys, "_base_executable", sys.executable)
        subprocess.run([base, "-m", "venv", str(target)], check=True, capture_output=True)
        proc = subprocess.run(
            [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
             f"kernels=={version}", _torch_requirement()],
            capture_output=True, text=True)
        if proc.returncode != 0:
            shutil.rmtree(target, ignore_errors=True)
            raise RuntimeError(f"cannot install kernels=={version}:\n{proc.stderr[-3000:]}")
        check = subprocess.run(
            [str(python), "-c", "import kernels, torch; print(kernels.__version__)"],
            capture_output=True, text=True)
        if check.returncode != 0 or check.stdout.strip() != version:
            shutil.rmtree(target, ignore_errors=True)
            raise RuntimeError(f"kernels=={version} does not import: {check.stderr[-2000:]}")
        (target / _STAMP).write_text(json.dumps({"kernels": version,
                                                 "torch": _torch_requirement()}))
    return UpstreamEnv(version, python)
