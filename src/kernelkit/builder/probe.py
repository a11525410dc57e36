"""What a target Python environment offers for building: torch, its CUDA, Python, platform.

One subprocess runs the standalone ``kernelkit/generate/torch_info.py`` with that interpreter
(the same script the generated CMake uses) and writes JSON.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from kernelkit.errors import CommandError, KernelkitError, NotBuildableError
from kernelkit.util.run import run
from kernelkit.variants.host import normalize_platform


@dataclass(frozen=True)
class TorchEnv:
    python: Path
    python_version: str
    python_include: Path
    torch_version: str  # as torch reports it, e.g. "2.14.1+cu130"
    cuda: str | None  # torch.version.cuda, e.g. "13.0"
    hip: str | None
    cxx11_abi: bool
    cmake_prefix_path: Path
    torch_dir: Path
    site_packages: tuple[Path, ...]
    nvidia_include_dirs: tuple[Path, ...]
    machine: str  # normalised: x86_64 | aarch64 (or what the platform says)
    os: str  # linux | darwin | windows
    tvm_ffi: str | None = None  # apache-tvm-ffi's version, when installed

    @property
    def torch_release(self) -> str:
        """The torch version without the local part: ``"2.14.1"``."""
        return self.torch_version.split("+")[0]

    @property
    def backends(self) -> tuple[str, ...]:
        """Backends this environment can build: a CUDA torch builds cuda and cpu."""
        if self.cuda:
            return ("cuda", "cpu")
        if self.hip:
            return ("rocm", "cpu")
        return ("cpu",)


def _script() -> Path:
    return Path(str(resources.files("kernelkit.generate").joinpath("torch_info.py")))


def _from_json(python: Path, data: dict[str, Any]) -> TorchEnv:
    machine, os_name = normalize_platform(data["machine"], data["os"])
    return TorchEnv(
        python=python,
        python_version=data["python_version"],
        python_include=Path(data["python_include"]),
        torch_version=data["torch_version"],
        cuda=data.get("cuda"),
        hip=data.get("hip"),
        cxx11_abi=bool(data["cxx11_abi"]),
        cmake_prefix_path=Path(data["cmake_prefix_path"]),
        torch_dir=Path(data["torch_dir"]),
        site_packages=tuple(Path(p) for p in data["site_packages"]),
        nvidia_include_dirs=tuple(Path(p) for p in data["nvidia_include_dirs"]),
        machine=machine,
        os=os_name,
        tvm_ffi=data.get("tvm_ffi_version"),
    )


def probe_python(python: Path) -> TorchEnv:
    """Describe the environment of interpreter ``python``; raise if it has no usable torch."""
    if not Path(python).exists():
        raise KernelkitError(f"Python interpreter {python} does not exist",
                             hint="pass --python with the interpreter of a torch environment")
    with tempfile.TemporaryDirectory(prefix="kernelkit-probe-") as tmp:
        out = Path(tmp) / "env.json"
        try:
            run([str(python), str(_script()), str(out)], what=f"probing {python}", timeout=300)
        except (CommandError, OSError) as exc:
            raise KernelkitError(f"cannot run Python interpreter {python}: {exc}") from None
        data = json.loads(out.read_text("utf-8"))
    if "error" in data:
        raise NotBuildableError(f"the environment of {python}", data["error"],
                                hint=f"install torch there: {python} -m pip install torch")
    return _from_json(Path(python).absolute(), data)
