"""Where a variant is compiled: one protocol, two sources.

An :class:`EnvironmentSource` says how to get a :class:`BuildEnvironment` (an interpreter with
torch, the process environment for CMake/ninja/nvcc, the probed torch, the CUDA toolkit and an
identity for the build cache):

- :class:`ThisInterpreter`: a given interpreter as it is (a plain ``kernelkit build``,
  ``--python``);
- :class:`PinnedEnvironment`: the variant's own venv from the matrix pin or the toolchain lock
  (``builder.toolchain.envs``), created or repaired on ``prepare``.

Toolkit discovery is the same for both: ``toolkit.find_cuda_toolkit`` over the environment's
variables (a pinned environment puts its CUDA home first).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from kernelkit.builder.toolchain.envs import EnvSpec, ensure_env, env_fingerprint, existing_env
from kernelkit.builder.toolchain.probe import TorchEnv, probe_python
from kernelkit.builder.toolchain.toolkit import CudaToolkit, require_cuda_toolkit


@dataclass(frozen=True)
class BuildEnvironment:
    """A ready environment: what ``build_variant`` compiles with."""

    python: Path
    environ: Mapping[str, str]
    torch: TorchEnv
    toolkit: CudaToolkit | None  # found when torch has CUDA and a CUDA variant is built
    toolchain_id: str  # identity of the toolchain, part of the build cache key
    lock_digest: str | None = None  # digest of the toolchain-lock entry it was installed from


class EnvironmentSource(Protocol):
    """How to get the environment one variant is built in."""

    def toolchain_id(self) -> str | None:
        """The toolchain identity without preparing anything (``None``: not created yet)."""

    def prepare(self, *, cuda: bool, log_path: Path) -> BuildEnvironment:
        """The ready environment (created or repaired if needed; may take minutes)."""


def _ready(python: Path, environ: Mapping[str, str], toolchain: str, cuda: bool,
           lock_digest: str | None = None, torch: TorchEnv | None = None) -> BuildEnvironment:
    toolkit = require_cuda_toolkit(environ) if cuda else None
    return BuildEnvironment(python, environ, torch or probe_python(python), toolkit, toolchain,
                            lock_digest)


@dataclass(frozen=True)
class ThisInterpreter:
    """An interpreter as it is: nothing is installed; its torch is what it is (``torch``: as the
    plan probed it, so that one build probes it once)."""

    python: Path
    environ: Mapping[str, str]
    torch: TorchEnv | None = None

    def toolchain_id(self) -> str:
        return f"python:{self.python}"

    def prepare(self, *, cuda: bool, log_path: Path) -> BuildEnvironment:
        torch = self.torch if self.torch is not None and self.torch.python == self.python \
            else None
        return _ready(self.python, self.environ, self.toolchain_id(), cuda, torch=torch)


@dataclass(frozen=True)
class PinnedEnvironment:
    """The variant's own venv holding exactly its pinned torch (and CUDA toolkit wheels)."""

    spec: EnvSpec
    envs_dir: Path
    environ: Mapping[str, str]
    update: bool = False

    def _toolchain(self, env_dir: Path | None) -> str:
        lock = self.spec.locked.digest if self.spec.locked else "unlocked"
        toolkit = self.spec.toolkit.reason if self.spec.toolkit else "no CUDA"
        return f"{lock}|{env_fingerprint(env_dir)}|{toolkit}"

    def toolchain_id(self) -> str | None:
        env_dir = existing_env(self.spec, self.envs_dir)
        return self._toolchain(env_dir) if env_dir is not None else None

    def prepare(self, *, cuda: bool, log_path: Path) -> BuildEnvironment:
        env = ensure_env(self.spec, self.envs_dir, update=self.update, log_path=log_path)
        lock = self.spec.locked.digest if self.spec.locked else None
        return _ready(env.python, env.environ(self.environ), self._toolchain(env.path), cuda, lock)
