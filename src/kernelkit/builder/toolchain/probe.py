"""What a target Python environment offers for building: torch, its CUDA, Python, platform.

One subprocess runs the standalone ``kernelkit/generate/torch_info.py`` with that interpreter
(the same script the generated CMake uses) and writes JSON. That imports torch (2-4 s), so the
answer is kept on disk (``~/.cache/kernelkit/probe``) under a key that a quick look at the
environment gives without importing torch (:data:`_FINGERPRINT`, ~30 ms): the interpreter, its
prefix and version, where torch and apache-tvm-ffi are installed and when those files were
last written, the nvidia-* header directories, and the probe script itself. Reinstalling torch
(or anything else the answer depends on) changes the key; a damaged entry is probed afresh.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from kernelkit.errors import CommandError, KernelkitError, NotBuildableError
from kernelkit.settings import KERNELKIT_PROBE_CACHE, process_environ
from kernelkit.util.fs import atomic_write_text
from kernelkit.util.paths import user_cache_dir
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
    # The probe's whole JSON answer (what the generated CMake reads as kernelkit_torch_info.json).
    info: dict[str, Any] = field(default_factory=dict, compare=False, hash=False, repr=False)

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
        info=data,
    )


# Run by the target interpreter: everything the probe's answer depends on, without importing
# torch. find_spec of a top-level package locates it without executing it.
_FINGERPRINT = r"""
import glob, importlib.util, json, os, sys
def where(name):
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.origin:
        return None
    st = os.stat(spec.origin)
    return [spec.origin, st.st_mtime_ns, st.st_size]
nvidia = sorted(d for p in sys.path if p
                for d in glob.glob(os.path.join(p, "nvidia", "*", "include")))
print(json.dumps([sys.executable, sys.prefix, sys.version, sys.path, where("torch"),
                  where("tvm_ffi"), nvidia]))
"""


def _cache_key(python: Path) -> str | None:
    """The probe cache key of ``python`` (``None``: it cannot be had; probe without a cache)."""
    try:
        out = run([str(python), "-c", _FINGERPRINT], what=f"fingerprinting {python}",
                  timeout=60).stdout
    except (CommandError, OSError):
        return None
    script = _script().read_bytes()
    return hashlib.sha256(out.encode() + b"\0" + script).hexdigest()[:32]


def probe_cache_dir(environ: dict[str, str] | None = None) -> Path:
    """Where probe answers are kept (``KERNELKIT_PROBE_CACHE``, else ``~/.cache/kernelkit/probe``;
    ``KERNELKIT_PROBE_CACHE=0`` turns the cache off)."""
    env = process_environ() if environ is None else environ
    return KERNELKIT_PROBE_CACHE.read(env) or user_cache_dir(env) / "probe"


def probe_python(python: Path) -> TorchEnv:
    """Describe the environment of interpreter ``python``; raise if it has no usable torch.
    Answered from the probe cache when the environment is unchanged since the last probe."""
    if not Path(python).exists():
        raise KernelkitError(f"Python interpreter {python} does not exist",
                             hint="pass --python with the interpreter of a torch environment")
    off = KERNELKIT_PROBE_CACHE.off(process_environ())
    key = None if off else _cache_key(Path(python))
    cached = probe_cache_dir() / f"{key}.json" if key else None
    if cached is not None:
        try:
            data = json.loads(cached.read_text("utf-8"))
            return _from_json(Path(python).absolute(), data)
        except (OSError, ValueError, KeyError, TypeError):
            pass  # absent or damaged: probe afresh
    data = _probe(Path(python))
    if "error" in data:
        raise NotBuildableError(f"the environment of {python}", data["error"],
                                hint=f"install torch there: {python} -m pip install torch")
    env = _from_json(Path(python).absolute(), data)
    if cached is not None:
        try:
            cached.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(cached, json.dumps(data, indent=1))
        except OSError:
            pass  # a read-only cache only costs the next build a probe
    return env


def _probe(python: Path) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="kernelkit-probe-") as tmp:
        out = Path(tmp) / "env.json"
        try:
            run([str(python), str(_script()), str(out)], what=f"probing {python}", timeout=300)
        except (CommandError, OSError) as exc:
            raise KernelkitError(f"cannot run Python interpreter {python}: {exc}") from None
        data: dict[str, Any] = json.loads(out.read_text("utf-8"))
    return data
