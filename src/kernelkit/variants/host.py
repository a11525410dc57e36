"""What this machine is: torch version and ABI, backend, CPU and OS (upstream-loader.md §2.1).

``detect_system`` imports torch lazily (inside the function) and only when it is installed;
without torch it falls back to probing the CUDA runtime library, as upstream does.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import platform
import sys
from dataclasses import dataclass, field, replace
from typing import Any

from kernelkit.errors import InvalidBackendError
from kernelkit.util.versions import major_minor
from kernelkit.variants.name import compute_tag, format_torch_variant

log = logging.getLogger(__name__)

#: backends whose compute tag carries a version (``cu130``, ``rocm70``, ``xpu20253``, ``cann80``)


@dataclass(frozen=True)
class System:
    """The facts variant choice depends on. Versions are ``(major, minor)``."""

    torch_version: tuple[int, int] | None
    cxx11_abi: bool | None
    backend: str  # cpu, cuda, rocm, xpu, metal, neuron, tpu, cann
    backend_version: tuple[int, int] | None
    cpu: str
    os: str
    tvm_ffi_version: tuple[int, int] | None = None
    macos_version: tuple[int, int] | None = None
    free_threaded: bool = False
    #: the interpreter's (major, minor): a 0.19-grammar name may require a newer CPython
    python_version: tuple[int, int] = field(default_factory=lambda: _this_python())
    has_mlx: bool = False  # ``mlx`` importable: ``mlx-<backend>`` noarch variants load

    @property
    def compute_tag(self) -> str:
        """The backend as it appears in variant names: ``cu130``, ``rocm70``, ``cpu``, ..."""
        return compute_tag(self.backend, self.backend_version)

    def arch_variant(self) -> str | None:
        """The torch arch variant name a build for this machine gets
        (``torch213-cxx11-cpu-x86_64-linux``); ``None`` without torch."""
        if self.torch_version is None:
            return None
        bver = None if self.backend_version is None else _dot(self.backend_version)
        return format_torch_variant(_dot(self.torch_version), self.backend, bver, self.cpu,
                                    self.os)

    def describe(self) -> str:
        """One line, e.g. ``torch 2.13 (cxx11 ABI), backend cpu, x86_64-linux``."""
        torch = "no torch" if self.torch_version is None else f"torch {_dot(self.torch_version)}"
        if self.cxx11_abi is not None:
            torch += " (cxx11 ABI)" if self.cxx11_abi else " (pre-cxx11 ABI)"
        backend = self.backend
        if self.backend_version is not None:
            backend += f" {_dot(self.backend_version)}"
        parts = [torch, f"backend {backend}", f"{self.cpu}-{self.os}"]
        if self.tvm_ffi_version is not None:
            parts.append(f"tvm-ffi {_dot(self.tvm_ffi_version)}")
        if self.macos_version is not None:
            parts.append(f"macOS {_dot(self.macos_version)}")
        if self.free_threaded:
            parts.append(f"free-threaded Python {_dot(self.python_version)}")
        return ", ".join(parts)


#: the distribution that installs the ``tvm_ffi`` module
TVM_FFI_DISTRIBUTION = "apache-tvm-ffi"


def detect_system(backend: str | None = None) -> System:
    """Describe this machine; ``backend`` (``"cpu"`` or the detected backend's name) overrides
    the detected backend, anything else raises :class:`InvalidBackendError`."""
    detected = _detect_cached()
    return select_backend(detected, backend)


def select_backend(detected: System, backend: str | None) -> System:
    """Apply a ``backend=`` override to a detected system (upstream ``_select_backend``)."""
    if backend is None or backend == detected.backend:
        return detected
    if backend == "cpu":
        return replace(detected, backend="cpu", backend_version=None)
    supported = ["cpu"] if detected.backend == "cpu" else ["cpu", detected.backend]
    raise InvalidBackendError(backend, supported)


@functools.lru_cache(maxsize=1)
def _detect_cached() -> System:
    # The machine does not change while the process runs; torch cannot be swapped either.
    return _detect()


def _detect() -> System:
    cpu, os_name, macos = _platform()
    torch_version: tuple[int, int] | None = None
    cxx11: bool | None = None
    if sys.modules.get("torch") is not None or importlib.util.find_spec("torch") is not None:
        import torch

        torch_version = major_minor(torch.__version__)
        cxx11 = bool(torch.compiled_with_cxx11_abi()) if os_name == "linux" else None
        backend, bversion = _torch_backend(torch)
    else:
        backend, bversion = _cudart_backend()
    return System(
        torch_version=torch_version,
        cxx11_abi=cxx11,
        backend=backend,
        backend_version=bversion,
        cpu=cpu,
        os=os_name,
        tvm_ffi_version=_tvm_ffi_version(),
        macos_version=macos,
        free_threaded=_free_threaded_build(),
        python_version=_this_python(),
        has_mlx=importlib.util.find_spec("mlx") is not None,
    )


def _this_python() -> tuple[int, int]:
    return sys.version_info[0], sys.version_info[1]


def _free_threaded_build() -> bool:
    """A free-threaded CPython loads only ``abi3t`` arch kernels (0.19 grammar, Python >= 3.15),
    never ``abi3`` ones. Such builds exist from 3.13 on; skip importing ``sysconfig`` (slow) on
    older interpreters."""
    if sys.version_info < (3, 13):
        return False
    import sysconfig

    return bool(sysconfig.get_config_var("Py_GIL_DISABLED"))


_CPUS = {"amd64": "x86_64", "x86_64": "x86_64", "arm64": "aarch64", "aarch64": "aarch64"}
_OSES = {"win32": "windows", "cygwin": "windows"}


def normalize_platform(machine: str, system: str) -> tuple[str, str]:
    """``(cpu, os)`` in variant-name spelling from what Python reports: ``platform.machine()``
    (``AMD64``, ``arm64``, ``x86_64``) and ``platform.system()`` or ``sys.platform``
    (``Linux``, ``linux``, ``Darwin``, ``win32``): ``("x86_64", "linux")``."""
    cpu = _CPUS.get(machine.lower(), machine.lower())
    name = system.lower()
    os_name = "linux" if name.startswith("linux") else _OSES.get(name, name)
    return cpu, os_name


def host_platform() -> str:
    """This machine as a build-matrix system name: ``x86_64-linux``, ``aarch64-darwin``."""
    cpu, os_name = normalize_platform(platform.machine(), platform.system())
    return f"{cpu}-{os_name}"


def _platform() -> tuple[str, str, tuple[int, int] | None]:
    cpu, os_name = normalize_platform(platform.machine(), platform.system())
    macos: tuple[int, int] | None = None
    if os_name == "darwin":
        release = platform.mac_ver()[0]
        macos = major_minor(release) if release else None
    return cpu, os_name, macos


def _torch_backend(torch: Any) -> tuple[str, tuple[int, int] | None]:
    """Upstream's detection order: TPU, Neuron, CUDA, ROCm, Metal, XPU, NPU (CANN), CPU."""
    if hasattr(torch.backends, "tpu"):
        return "tpu", None
    if hasattr(torch, "neuron"):
        return "neuron", None  # a Neuron plugin may sit on a CUDA torch: checked first
    if torch.version.cuda:
        return "cuda", major_minor(torch.version.cuda)
    if torch.version.hip:
        return "rocm", major_minor(torch.version.hip.split("-")[0])
    if torch.backends.mps.is_available():
        return "metal", None
    xpu = getattr(torch.version, "xpu", None)  # absent on torch <= 2.6
    if xpu:
        return "xpu", (int(xpu[0:4]), int(xpu[5:6]))  # "20250301" -> (2025, 3)
    if torch._C._get_privateuse1_backend_name() == "npu":
        return "cann", _cann_version()
    return "cpu", None


def _cann_version() -> tuple[int, int] | None:
    try:
        from torch_npu.utils.collect_env import get_cann_version  # type: ignore[import-not-found]

        text = str(get_cann_version())
        return int(text[0]), int(text[2])
    except Exception as exc:  # the plugin's helper is best effort
        log.warning("could not read the CANN version (%s); assuming none", exc)
        return None


def _cudart_backend() -> tuple[str, tuple[int, int] | None]:
    """Without torch: ask the CUDA runtime library for its version, else CPU."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("cudart")
    if name is None:
        return "cpu", None
    try:
        lib = ctypes.CDLL(name)
        value = ctypes.c_int(0)
        rc = lib.cudaRuntimeGetVersion(ctypes.byref(value))
    except (OSError, AttributeError) as exc:
        log.warning("could not load the CUDA runtime (%s); using the CPU backend", exc)
        return "cpu", None
    if rc != 0:
        log.warning("cudaRuntimeGetVersion failed with error %d; using the CPU backend", rc)
        return "cpu", None
    return "cuda", (value.value // 1000, (value.value % 1000) // 10)


def _tvm_ffi_version() -> tuple[int, int] | None:
    """tvm-ffi's version, from its installed metadata: importing it costs ~25 ms on every load
    (benchmarks/bench_loader.py); imported only when the metadata says nothing."""
    loaded = sys.modules.get("tvm_ffi")
    if loaded is None and importlib.util.find_spec("tvm_ffi") is None:
        return None
    try:
        if loaded is None:
            from importlib.metadata import PackageNotFoundError, version

            try:
                return major_minor(version(TVM_FFI_DISTRIBUTION))
            except (PackageNotFoundError, ValueError):
                pass  # installed without metadata (a source tree on the path): ask the module
        import tvm_ffi

        return major_minor(str(tvm_ffi.__version__))
    except Exception:  # a broken optional install must not break kernel loading
        return None


def _dot(version: tuple[int, int]) -> str:
    return f"{version[0]}.{version[1]}"
