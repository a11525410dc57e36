"""Build environments: one isolated venv per variant holding exactly its pinned torch.

An environment lives at ``<envs_dir>/<variant>-<hash of its pins>`` and is created on demand
(``python -m venv`` + pip), reused while it is healthy (Python runs, torch imports with the
pinned version, and - with a toolchain lock - the installed distributions equal the lock), and
recreated atomically otherwise: built in a temporary sibling, then renamed into place.

CUDA toolkit (``toolkit.choose_cuda_toolkit``): the system nvcc when its major.minor equals the
variant's CUDA version, else the
``nvidia-cuda-nvcc``/``-runtime``/``-cccl`` wheels of that version are installed into the
environment and merged (symlinks) into ``<env>/cuda``, which becomes ``CUDA_HOME``.
cmake and ninja come from kernelkit's own environment (the ``build`` extra).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from kernelkit.builder.toolchain.toolchain_lock import (
    LockedVariant,
    canonical_name,
    drift,
    requirements_text,
    verify_local_wheels,
)
from kernelkit.builder.toolchain.toolkit import CudaToolkit, ToolkitChoice, choose_cuda_toolkit
from kernelkit.builder.toolchain.wheel_sources import needs_index
from kernelkit.errors import CommandError, LockError, NotBuildableError
from kernelkit.settings import CUDA_HOME, process_environ
from kernelkit.util.fs import (
    atomic_write_text,
    file_lock,
    recover_dir,
    remove_stale_siblings,
    replace_dir,
    temp_sibling,
)
from kernelkit.util.run import run
from kernelkit.variants.matrix import BuildTarget, Matrix, Pin, load_matrix

MARKER = ".kernelkit-env.json"
_PROBE = r"""
import json, sys, importlib.metadata as md
out = {"python": "%d.%d" % sys.version_info[:2], "dists": {}}
for d in md.distributions():
    out["dists"][d.metadata["Name"]] = d.version
try:
    import torch
    out["torch"] = torch.__version__
    out["torch-cuda"] = torch.version.cuda
except Exception as exc:
    out["error"] = repr(exc)
print(json.dumps(out))
"""


# --- CUDA home from pip's toolkit wheels ------------------------------------------------


def assemble_cuda_home(site_packages: Path, roots: tuple[str, ...], dest: Path) -> Path:
    """Merge the toolkit wheels' trees (``nvidia/cu13``, ``nvidia/cuda_nvcc``, ...) into one
    ``CUDA_HOME`` of symlinks; add ``lib64`` and unversioned ``libcudart.so`` as CMake wants."""
    dest.mkdir(parents=True, exist_ok=True)
    for root in roots:
        base = site_packages / root
        for top in sorted(p for p in base.iterdir() if p.is_dir()) if base.is_dir() else []:
            (dest / top.name).mkdir(exist_ok=True)
            for item in sorted(top.iterdir()):
                link = dest / top.name / item.name
                if not link.exists() and not link.is_symlink():
                    # relative: the environment is built in a temporary sibling, then renamed
                    link.symlink_to(os.path.relpath(item, link.parent))
    lib = dest / "lib"
    if lib.is_dir() and not (dest / "lib64").exists():
        (dest / "lib64").symlink_to("lib")
    for versioned in sorted(lib.glob("libcudart.so.*")) if lib.is_dir() else []:
        plain = lib / "libcudart.so"
        if not plain.exists():
            plain.symlink_to(versioned.name)
    return dest


# --- environments ---------------------------------------------------------------------------


@dataclass(frozen=True)
class EnvSpec:
    """What one environment must contain."""

    variant: str
    pin: Pin
    base_python: Path
    locked: LockedVariant | None = None
    toolkit: ToolkitChoice | None = None

    @property
    def key(self) -> str:
        """Hash of the pins: a different pin (or toolkit source) gives a different directory."""
        # The resolved interpreter: `python`, `python3` and a venv's link name one interpreter.
        parts = [*self.pin.requirements, self.pin.index_url or "",
                 str(self.base_python.resolve())]
        if self.toolkit is not None and self.toolkit.source == "pip":
            parts += list(self.toolkit.requirements)
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:12]

    @property
    def dirname(self) -> str:
        return f"{self.variant}-{self.key}"


@dataclass(frozen=True)
class EnvProbe:
    ok: bool
    reason: str
    python_version: str = ""
    torch_version: str = ""
    dists: Mapping[str, str] | None = None


@dataclass(frozen=True)
class BuildEnv:
    path: Path
    spec: EnvSpec
    probe: EnvProbe
    cuda_home: Path | None = None

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"

    def environ(self, base: Mapping[str, str] | None = None) -> dict[str, str]:
        """Environment variables to run a command inside this env."""
        env = dict(process_environ() if base is None else base)
        paths = [str(self.path / "bin")]
        if self.cuda_home is not None:
            paths.append(str(self.cuda_home / "bin"))
            env[CUDA_HOME.name] = str(self.cuda_home)
        paths.append(str(Path(sys.executable).parent))  # cmake/ninja from kernelkit's env
        env["PATH"] = os.pathsep.join([*paths, env.get("PATH", "")])
        env["VIRTUAL_ENV"] = str(self.path)
        env.pop("PYTHONHOME", None)
        return env


def env_spec(target: BuildTarget, *, base_python: Path | None = None,
             locked: LockedVariant | None = None,
             system_toolkit: CudaToolkit | None = None,
             matrix: Matrix | None = None) -> EnvSpec:
    if target.pin is None:
        raise NotBuildableError(target.variant, "the matrix has no torch pin for it")
    toolkit = None
    if target.backend == "cuda" and target.backend_version:
        wheels = (matrix or load_matrix()).toolkit_wheels_for(target.backend_version)
        toolkit = choose_cuda_toolkit(target.backend_version, system_toolkit, wheels)
    return EnvSpec(target.variant, target.pin, Path(base_python or sys.executable), locked, toolkit)


def probe_env(path: Path, spec: EnvSpec) -> EnvProbe:
    """Is the env at ``path`` usable for ``spec``? (python runs, torch imports, pinned version)"""
    python = path / "bin" / "python"
    if not (path / MARKER).is_file():
        return EnvProbe(False, f"{path} is missing or was not completely created")
    try:
        proc = run([str(python), "-c", _PROBE], what="python (probe env)", timeout=300)
        data = json.loads(proc.stdout.strip().splitlines()[-1])
    except (CommandError, OSError, ValueError, IndexError) as exc:
        return EnvProbe(False, f"its python does not run ({str(exc).splitlines()[0]})")
    dists = {canonical_name(n): v for n, v in data["dists"].items()}
    if "error" in data:
        return EnvProbe(False, f"torch does not import: {data['error']}", data["python"], "", dists)
    if dists.get("torch") != spec.pin.torch:
        return EnvProbe(False, f"torch is {dists.get('torch')}, pinned {spec.pin.torch}",
                        data["python"], data["torch"], dists)
    for extra in spec.pin.extras:  # e.g. apache-tvm-ffi==0.1.15.post2
        name, _, version = extra.partition("==")
        if dists.get(canonical_name(name)) != version:
            return EnvProbe(False, f"{name} is {dists.get(canonical_name(name))}, pinned "
                            f"{version}", data["python"], data["torch"], dists)
    return EnvProbe(True, "ok", data["python"], data["torch"], dists)


def _pip(python: Path, args: list[str], index_url: str | None, log_path: Path | None) -> None:
    """pip install from the configured sources; add ``index_url`` only if they lack a wheel."""
    # --no-compile: byte-compiling torch doubles the install time and the .pyc are rebuilt
    # on demand anyway.
    cmd = [str(python), "-m", "pip", "install", "--no-input", "--no-compile", *args]
    try:
        run(cmd, log_path=log_path, what="pip install")
    except CommandError as exc:
        if not needs_index(exc, index_url) or index_url is None:
            raise
        run([*cmd, "--extra-index-url", index_url], log_path=log_path, what="pip install")


def _install_locked(tmp: Path, spec: EnvSpec, log_path: Path | None) -> None:
    assert spec.locked is not None
    with_toolkit = spec.toolkit is not None and spec.toolkit.source == "pip"
    wheels = spec.locked.wheels + (spec.locked.toolkit if with_toolkit else ())
    reqs = tmp / "kernelkit-requirements.txt"
    reqs.write_text(requirements_text(wheels), encoding="utf-8")
    _pip(tmp / "bin" / "python", ["--require-hashes", "--no-deps", "-r", str(reqs)],
         spec.locked.index_url, log_path)


def _install_unlocked(tmp: Path, spec: EnvSpec, log_path: Path | None) -> None:
    python = tmp / "bin" / "python"
    _pip(python, spec.pin.requirements, spec.pin.index_url, log_path)
    if spec.toolkit is not None and spec.toolkit.source == "pip":
        _pip(python, list(spec.toolkit.requirements), spec.pin.index_url, log_path)


def _relocate_scripts(env: Path, old: Path, new: Path) -> None:
    """venv scripts (activate, pip shebangs) embed the directory they were made in."""
    for script in (env / "bin").iterdir():
        if script.is_symlink() or not script.is_file() or script.stat().st_size > 1 << 20:
            continue
        data = script.read_bytes()
        if str(old).encode() in data:
            script.write_bytes(data.replace(str(old).encode(), str(new).encode()))


def _site_packages(env: Path) -> Path:
    return next((env / "lib").glob("python*/site-packages"))


def create_env(spec: EnvSpec, dest: Path, *, log_path: Path | None = None) -> BuildEnv:
    """Create the environment in a temporary sibling of ``dest``, check it, rename into place."""
    if spec.locked is not None:  # a tampered lock fails here, before anything is installed
        verify_local_wheels(spec.locked, include_toolkit=True)
    tmp = temp_sibling(dest, "new")
    try:
        run([str(spec.base_python), "-m", "venv", str(tmp)], log_path=log_path,
            what="python -m venv")
        (_install_locked if spec.locked is not None else _install_unlocked)(tmp, spec, log_path)
        if spec.toolkit is not None and spec.toolkit.source == "pip":
            assemble_cuda_home(_site_packages(tmp), spec.toolkit.roots, tmp / "cuda")
        _relocate_scripts(tmp, tmp, dest)
        atomic_write_text(tmp / MARKER, json.dumps(
            {"variant": spec.variant, "requirement": spec.pin.requirement,
             "index-url": spec.pin.index_url,
             "lock-digest": spec.locked.digest if spec.locked else None}, indent=2) + "\n")
        probe = probe_env(tmp, spec)
        if not probe.ok:
            raise NotBuildableError(f"environment for {spec.variant}", probe.reason,
                                    hint=f"see {log_path}" if log_path else None)
        replace_dir(tmp, dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return _build_env(dest, spec, probe)


def _build_env(path: Path, spec: EnvSpec, probe: EnvProbe) -> BuildEnv:
    cuda_home = None
    if spec.toolkit is not None:
        cuda_home = path / "cuda" if spec.toolkit.source == "pip" else (
            spec.toolkit.system.root if spec.toolkit.system else None)
    return BuildEnv(path, spec, probe, cuda_home)


def _check_drift(path: Path, spec: EnvSpec, probe: EnvProbe) -> list[str]:
    if spec.locked is None or probe.dists is None:
        return []
    with_toolkit = spec.toolkit is not None and spec.toolkit.source == "pip"
    return drift(spec.locked, probe.dists, with_toolkit=with_toolkit)


def ensure_env(spec: EnvSpec, envs_dir: Path, *, update: bool = False,
               log_path: Path | None = None) -> BuildEnv:
    """The healthy environment for ``spec``: reused, repaired, or created.

    With a lock, an environment whose installed distributions differ from it is refused
    (:class:`LockError`) unless ``update`` is true, which reinstalls it from the lock."""
    dest = envs_dir / spec.dirname
    with file_lock(envs_dir / ".locks" / f"{spec.dirname}.lock"):
        recover_dir(dest)  # what a creation killed mid-way left behind
        remove_stale_siblings(dest, ("new", "old"))
        probe = probe_env(dest, spec)
        if probe.ok:
            problems = _check_drift(dest, spec, probe)
            if not problems:
                return _build_env(dest, spec, probe)
            if not update:
                raise LockError(
                    f"build environment {dest} of {spec.variant} drifted from the toolchain "
                    "lock:\n" + "\n".join(f"  - {p}" for p in problems),
                    hint="rerun with --update-toolchain to reinstall it from the lock")
        return create_env(spec, dest, log_path=log_path)


def existing_env(spec: EnvSpec, envs_dir: Path) -> Path | None:
    """The environment's directory if it was completely created (no probe)."""
    dest = envs_dir / spec.dirname
    return dest if (dest / MARKER).is_file() else None


def env_fingerprint(env_dir: Path | None) -> str:
    """Installed distributions of an environment, read from its ``*.dist-info`` names (cheap:
    no interpreter start), so a changed environment changes the key."""
    if env_dir is None:
        return "kernelkit-python:" + sys.executable
    names = sorted(p.name for p in (env_dir / "lib").glob("python*/site-packages/*.dist-info"))
    return hashlib.sha256("\n".join([str(env_dir), *names]).encode()).hexdigest()
