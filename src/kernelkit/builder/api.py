"""``build``: every variant of a kernel that one Python environment can build."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

from kernelkit.builder.compile import BuildResult, build_one, cuda_capabilities_from_env
from kernelkit.builder.probe import TorchEnv, probe_python
from kernelkit.errors import NotBuildableError
from kernelkit.manifest import Manifest, load_manifest


def select_backends(manifest: Manifest, env: TorchEnv, requested: list[str] | None) -> list[str]:
    """The backends to build: ``requested`` (each must be in the manifest), else every backend
    of the manifest that ``env`` supports (CUDA torch: cuda and cpu; CPU torch: cpu)."""
    if requested:
        return list(dict.fromkeys(requested))
    chosen = [b for b in env.backends if b in manifest.general.backends]
    if not chosen:
        raise NotBuildableError(
            f"{manifest.path or 'build.toml'}",
            f"general.backends {list(manifest.general.backends)} has none of the backends that "
            f"torch {env.torch_version} of {env.python} supports ({', '.join(env.backends)})",
            hint="pass --python with an environment whose torch supports one of them")
    return chosen


def build(project: Path, *, python: Path | None = None, backends: list[str] | None = None,
          out_root: Path | None = None, cuda_capabilities: list[str] | None = None,
          jobs: int | None = None,
          on_start: Callable[[str], None] | None = None) -> list[BuildResult]:
    """Build the variants of ``project`` for the torch of ``python`` (default: this
    interpreter) into ``out_root`` (default ``<project>/build``); ``on_start(backend)`` is
    called before each build. Reads ``KERNELKIT_CUDA_CAPABILITIES``, ``CUDA_HOME``/``PATH``."""
    manifest = load_manifest(Path(project).resolve())
    env = probe_python(Path(python) if python is not None else Path(sys.executable))
    caps = cuda_capabilities or cuda_capabilities_from_env(os.environ)
    results = []
    for backend in select_backends(manifest, env, backends):
        if on_start is not None:
            on_start(backend)
        results.append(build_one(manifest, env, backend, out_root=out_root,
                                 cuda_capabilities=caps, jobs=jobs, environ=os.environ))
    return results
