"""The CUDA toolkit: one finder, one value type, one decision.

``find_cuda_toolkit`` looks at ``$CUDA_HOME``/``$CUDA_PATH``, then ``nvcc`` on ``PATH``, then
``/usr/local/cuda``; wrapper scripts and symlinks are resolved to the real ``nvcc`` (its
``--dryrun`` output names its own directory). ``choose_cuda_toolkit`` (pure) decides, for one
variant's CUDA version, between the system toolkit and pip's toolkit wheels.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from kernelkit.errors import CommandError, NotBuildableError
from kernelkit.settings import CUDA_HOME, CUDA_PATH, PATH, process_environ
from kernelkit.util.run import run
from kernelkit.util.versions import major_minor_text
from kernelkit.variants.matrix import ToolkitWheels

_RELEASE_RE = re.compile(r"release (\d+)\.(\d+)")
_HERE_RE = re.compile(r"^#\$ _HERE_=(.+)$", re.MULTILINE)
_FALLBACK_PATH = "/usr/local/cuda/bin"


@dataclass(frozen=True)
class CudaToolkit:
    """A CUDA toolkit: its root (``CUDA_HOME``), its real ``nvcc`` and its version."""

    root: Path
    nvcc: Path
    version: str  # major.minor, e.g. "13.0"

    @classmethod
    def of_nvcc(cls, nvcc: Path, version: str) -> CudaToolkit:
        """The toolkit whose ``bin/`` holds ``nvcc``."""
        return cls(root=nvcc.parent.parent, nvcc=nvcc, version=version)


def _nvcc_candidates(env: Mapping[str, str]) -> list[Path]:
    found = [root / "bin" / "nvcc" for root in (CUDA_HOME.read(env), CUDA_PATH.read(env)) if root]
    on_path = shutil.which("nvcc", path=PATH.raw(env) or os.defpath)
    if on_path:
        found.append(Path(on_path))
    found.append(Path(_FALLBACK_PATH) / "nvcc")
    return found


def nvcc_version(nvcc: Path) -> str:
    out = run([str(nvcc), "--version"], what="nvcc --version").stdout
    m = _RELEASE_RE.search(out)
    if not m:
        raise NotBuildableError("the CUDA toolkit", f"cannot read the version of {nvcc}: {out!r}")
    return f"{m.group(1)}.{m.group(2)}"


def real_nvcc(nvcc: Path) -> Path:
    """The real ``nvcc`` binary: ``nvcc`` on PATH may be a symlink or a wrapper script, so ask
    nvcc where it lives (its ``--dryrun`` output names its own directory)."""
    proc = run([str(nvcc), "--dryrun", "-c", "-x", "cu", os.devnull, "-o", os.devnull],
               what="nvcc --dryrun", check=False)
    m = _HERE_RE.search(proc.stdout)
    here = Path(m.group(1).strip()) if m else nvcc.resolve().parent
    return here.resolve() / "nvcc"


def find_cuda_toolkit(env: Mapping[str, str] | None = None) -> CudaToolkit | None:
    """The first working toolkit of ``$CUDA_HOME``/``$CUDA_PATH``, ``nvcc`` on ``PATH``,
    ``/usr/local/cuda`` (``env`` defaults to the process environment); ``None`` when there is
    none."""
    env = process_environ() if env is None else env
    for nvcc in _nvcc_candidates(env):
        if not nvcc.is_file():
            continue
        try:
            real = real_nvcc(nvcc)
            return CudaToolkit.of_nvcc(real, nvcc_version(real))
        except (CommandError, NotBuildableError, OSError):
            continue
    return None


def require_cuda_toolkit(env: Mapping[str, str] | None = None) -> CudaToolkit:
    """:func:`find_cuda_toolkit`, raising when there is none."""
    toolkit = find_cuda_toolkit(env)
    if toolkit is None:
        raise NotBuildableError("a cuda variant", "no CUDA toolkit found (no nvcc)",
                                hint="install the CUDA toolkit matching torch.version.cuda and "
                                     "set CUDA_HOME or put nvcc on PATH")
    return toolkit


# --- which toolkit one variant uses (pure) --------------------------------------------------


@dataclass(frozen=True)
class ToolkitChoice:
    source: Literal["system", "pip"]
    cuda_version: str
    reason: str
    system: CudaToolkit | None = None
    requirements: tuple[str, ...] = ()
    roots: tuple[str, ...] = ()


def choose_cuda_toolkit(cuda_version: str, system: CudaToolkit | None,
                        wheels: ToolkitWheels | None) -> ToolkitChoice:
    """Use the system toolkit when its major.minor equals ``cuda_version``; else pip's wheels."""
    want = major_minor_text(cuda_version)
    if system is not None and major_minor_text(system.version) == want:
        return ToolkitChoice("system", want, f"system nvcc {system.version} at {system.nvcc}",
                             system=system)
    have = (f"system nvcc is {system.version} ({system.nvcc})" if system else "no system nvcc")
    if wheels is None:
        raise NotBuildableError(f"CUDA {want}", f"{have} and no toolkit wheels are known for "
                                f"CUDA {want.split('.')[0]}",
                                hint=f"install the CUDA {want} toolkit and put its nvcc on PATH")
    return ToolkitChoice("pip", want, f"{have}; using pip's CUDA {want} toolkit wheels",
                         requirements=tuple(wheels.requirements(want)), roots=wheels.roots)
