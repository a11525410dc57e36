"""Find the CUDA toolkit (nvcc) used for CUDA builds and read its version."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from kernelkit.errors import CommandError, NotBuildableError
from kernelkit.util.run import run

_RELEASE_RE = re.compile(r"release (\d+)\.(\d+)")
_HERE_RE = re.compile(r"^#\$ _HERE_=(.+)$", re.MULTILINE)


@dataclass(frozen=True)
class CudaToolkit:
    root: Path
    nvcc: Path
    version: str  # major.minor, e.g. "13.0"


def _nvcc_candidates(env: Mapping[str, str]) -> list[Path]:
    found = [Path(env[var]) / "bin" / "nvcc" for var in ("CUDA_HOME", "CUDA_PATH") if env.get(var)]
    on_path = shutil.which("nvcc", path=env.get("PATH", os.defpath))
    if on_path:
        found.append(Path(on_path))
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


def find_cuda_toolkit(env: Mapping[str, str]) -> CudaToolkit:
    """``$CUDA_HOME``/``$CUDA_PATH``, then ``nvcc`` on ``PATH``; raise if none works."""
    for nvcc in _nvcc_candidates(env):
        if not nvcc.is_file():
            continue
        try:
            real = real_nvcc(nvcc)
            version = nvcc_version(real)
        except (CommandError, OSError):
            continue
        return CudaToolkit(root=real.parent.parent, nvcc=real, version=version)
    raise NotBuildableError("a cuda variant", "no CUDA toolkit found (no nvcc)",
                            hint="install the CUDA toolkit matching torch.version.cuda and set "
                                 "CUDA_HOME or put nvcc on PATH")
