"""The typed model of ``build.toml`` (edition 5). Parsing and validation live in ``parse.py``.

Field names follow the TOML keys with ``-`` turned into ``_``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import total_ordering
from pathlib import Path
from typing import Literal

BACKENDS: tuple[str, ...] = ("cann", "cpu", "cuda", "metal", "neuron", "rocm", "tpu", "xpu")
KERNEL_BACKENDS: tuple[str, ...] = ("cpu", "cuda", "metal", "rocm", "xpu")
BUILDABLE_BACKENDS: tuple[str, ...] = ("cpu", "cuda")
CURRENT_EDITION = 5

NAME_RE = re.compile(r"^[a-z][-a-z0-9]*[a-z0-9]\Z")


@total_ordering
@dataclass(frozen=True)
class Version:
    """A dot-separated version of non-negative integers; trailing zeros dropped ("2.0" == "2")."""

    parts: tuple[int, ...]

    @classmethod
    def parse(cls, text: str) -> Version:
        if not isinstance(text, str) or not text:
            raise ValueError(f"invalid version {text!r}: expected a string such as \"2.11\"")
        try:
            parts = [int(p) for p in text.split(".")]
        except ValueError:
            raise ValueError(
                f"invalid version {text!r}: parts must be non-negative integers"
            ) from None
        if any(p < 0 for p in parts) or any(
            not (s.isascii() and s.isdigit()) for s in text.split(".")
        ):
            raise ValueError(f"invalid version {text!r}: parts must be non-negative integers")
        while len(parts) > 1 and parts[-1] == 0:
            parts.pop()
        return cls(tuple(parts))

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self.parts < other.parts

    def __str__(self) -> str:
        return ".".join(str(p) for p in self.parts)


@dataclass(frozen=True)
class KernelDependency:
    repo_id: str
    version: int | None = None
    revision: str | None = None


@dataclass(frozen=True)
class Hub:
    repo_id: str | None = None
    branch: str | None = None


@dataclass(frozen=True)
class BackendGeneral:
    """``[general.cuda]``, ``[general.xpu]``, ``[general.neuron]``, ``[general.tpu]``."""

    minver: Version | None = None  # cuda only
    maxver: Version | None = None  # cuda only
    kernel_depends: tuple[KernelDependency, ...] = ()
    python_depends: tuple[str, ...] = ()


@dataclass(frozen=True)
class General:
    name: str
    version: int
    license: str
    backends: tuple[str, ...]
    upstream: str | None = None
    source: str | None = None
    python_depends: tuple[str, ...] = ()
    kernel_depends: tuple[KernelDependency, ...] = ()
    hub: Hub = field(default_factory=Hub)
    cuda: BackendGeneral | None = None
    xpu: BackendGeneral | None = None
    neuron: BackendGeneral | None = None
    tpu: BackendGeneral | None = None

    @property
    def python_name(self) -> str:
        return self.name.replace("-", "_")


@dataclass(frozen=True)
class TorchFramework:
    """``[torch]``: an ahead-of-time compiled torch extension."""

    kind: Literal["torch"] = "torch"
    src: tuple[str, ...] = ()
    include: tuple[str, ...] = ()
    pyext: tuple[str, ...] = ("py", "pyi")
    minver: Version | None = None
    maxver: Version | None = None
    # None: no stable ABI; a Version: all backends; a dict: only the listed backends.
    stable_abi: Version | dict[str, Version] | None = None
    cxx_flags: tuple[str, ...] = ()

    def stable_abi_for(self, backend: str) -> Version | None:
        if isinstance(self.stable_abi, dict):
            return self.stable_abi.get(backend)
        return self.stable_abi


@dataclass(frozen=True)
class TorchNoarch:
    """``[torch-noarch]``: pure Python / JIT kernels."""

    kind: Literal["torch-noarch"] = "torch-noarch"
    pyext: tuple[str, ...] = ("py", "pyi")
    cuda_capabilities: tuple[str, ...] = ()
    rocm_archs: tuple[str, ...] = ()


@dataclass(frozen=True)
class TvmFfi:
    """``[tvm-ffi]``: an ahead-of-time compiled apache-tvm-ffi extension (no libtorch)."""

    kind: Literal["tvm-ffi"] = "tvm-ffi"
    src: tuple[str, ...] = ()
    include: tuple[str, ...] = ()
    pyext: tuple[str, ...] = ("py", "pyi")
    cxx_flags: tuple[str, ...] = ()


Framework = TorchFramework | TorchNoarch | TvmFfi


@dataclass(frozen=True)
class KernelComponent:
    """One ``[kernel.<name>]`` table."""

    name: str
    backend: str
    src: tuple[str, ...]
    depends: tuple[str, ...]
    include: tuple[str, ...] = ()
    cxx_flags: tuple[str, ...] = ()
    cuda_capabilities: tuple[str, ...] | None = None
    cuda_flags: tuple[str, ...] = ()
    cuda_minver: Version | None = None
    rocm_archs: tuple[str, ...] | None = None
    hip_flags: tuple[str, ...] = ()
    sycl_flags: tuple[str, ...] = ()


@dataclass(frozen=True)
class Manifest:
    general: General
    framework: Framework
    kernels: tuple[KernelComponent, ...] = ()
    # Where it was read from (None for manifests parsed from a string).
    path: Path | None = None
    # The edition found in the file (5, or 4/3 for migrated files).
    source_edition: int = CURRENT_EDITION
    # Non-fatal notes, e.g. "edition 4 upgraded in memory; run `kernelkit update-build`".
    warnings: tuple[str, ...] = ()

    @property
    def root(self) -> Path:
        """The kernel project directory."""
        return self.path.parent if self.path is not None else Path(".")

    def kernels_for(self, backend: str) -> tuple[KernelComponent, ...]:
        return tuple(k for k in self.kernels if k.backend == backend)
