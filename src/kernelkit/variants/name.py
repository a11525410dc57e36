"""Variant names: parse and format, in both grammars upstream ``kernels`` 0.19 reads.

**Legacy grammar** (upstream-builder.md §2.1; every ``kernels`` release reads it):
``torch213-cxx11-cu130-x86_64-linux``, ``torch-stable-abi211-cpu-x86_64-linux``,
``tvm-ffi01-cpu-x86_64-linux``, noarch ``torch-cuda``. ``XY`` is the major digits followed by
the minor digits; the Python ABI is implicit (``cpython-3.9-abi3``).

**0.19 grammar** (read by ``kernels`` >= 0.19 only; upstream-0.19.md): dotted versions, the
backend spelled out and the Python version and ABI written down, e.g.
``torch-2.13-cxx11-cpu-cpython-3.9-abi3-x86_64-linux``,
``torch-stable-abi-2.11-cuda-12.6-cpython-3.9-abi3-x86_64-linux``,
``tvm-ffi-0.1-cpu-cpython-3.9-abi3-x86_64-linux``; ``abi3t`` (free-threaded CPython >= 3.15);
noarch ``mlx-<backend>``; SDK variants ``sdk``, ``sdk-<backend>``,
``sdk[-<backend>[-<X.Y>]]-cpython-<X.Y>-<abi>-<cpu>-<os>``. CANN's noarch variant is
``torch-cann`` (``torch-npu`` before 0.19; still parsed).

Which grammar ``kernelkit build`` writes is :data:`BUILD_NAME_GRAMMAR` (legacy: kernels 0.17
cannot parse the 0.19 grammar; docs/compatibility.md says why).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal

from kernelkit.util.versions import major_minor

Grammar = Literal["legacy", "0.19"]

#: The grammar ``kernelkit build`` names its variants in. Legacy, because kernels 0.17.2 (still
#: in use) parses only the legacy grammar, while 0.19 reads both; a name in the 0.19 grammar
#: would be invisible to 0.17 loaders. Only what the legacy grammar cannot express (a Python
#: ABI other than ``cpython-3.9-abi3``) needs the 0.19 grammar, and kernelkit builds none.
BUILD_NAME_GRAMMAR: Final[Grammar] = "legacy"

#: Backends with a version in the name (``cu130`` / ``cuda-13.0``) and their legacy prefix.
COMPUTE_PREFIXES: dict[str, str] = {"cuda": "cu", "rocm": "rocm", "xpu": "xpu", "cann": "cann"}
#: Backends named without a version.
PLAIN_BACKENDS = ("cpu", "metal", "neuron", "tpu")
#: Backend names a noarch variant (``torch-<b>``, ``mlx-<b>``, ``sdk-<b>``) may carry.
NOARCH_BACKENDS = ("cpu", "cuda", "metal", "rocm", "xpu", "tpu", "neuron", "npu", "cann",
                   "universal")
CPUS = ("x86_64", "aarch64")
OSES = ("linux", "darwin", "windows")
PYTHON_ABIS = ("abi3", "abi3t")
LEGACY_PYTHON = (3, 9)
ABI3T_MIN_PYTHON = (3, 15)

_LEGACY_ARCH_RE = re.compile(
    r"^(?:(?P<stable>torch-stable-abi)(?P<sv>\d\d+)|(?P<tvm>tvm-ffi)(?P<tv>\d\d+)"
    r"|torch(?P<torch>\d\d+))"
    r"(?:-(?P<abi>cxx11|cxx98))?"
    r"-(?P<compute>[a-z]+\d*)-(?P<cpu>[a-z0-9_]+)-(?P<os>[a-z]+)$"
)
_NEW_FRAMEWORK_RE = re.compile(
    r"^(?:(?P<stable>torch-stable-abi)|(?P<tvm>tvm-ffi)|(?P<torch>torch))-(?P<v>\d+\.\d+)"
    r"(?:-(?P<abi>cxx11|cxx98))?-(?P<rest>.+)$"
)
_TAIL_RE = re.compile(
    r"^(?:(?P<backend>[a-z]+)(?:-(?P<bv>\d+\.\d+))?-)?cpython-(?P<py>\d+\.\d+)"
    r"-(?P<pyabi>abi3t?)-(?P<cpu>[a-z0-9_]+)-(?P<os>[a-z]+)$"
)
_DOTTED_RE = re.compile(r"^(\d+)\.(\d+)$")


def xy(version: str) -> str:
    """``"2.13.0"`` -> ``"213"``, ``"13.0"`` -> ``"130"``, ``"2"`` -> ``"20"``."""
    parts = version.split("+")[0].split(".")
    major = parts[0]
    minor = parts[1] if len(parts) > 1 else "0"
    return f"{int(major)}{int(minor)}"


def from_xy(digits: str) -> tuple[int, int]:
    """``"213"`` -> ``(2, 13)``: the first digit is the major version (torch, CUDA < 10 aside)."""
    return int(digits[0]), int(digits[1:] or "0")


def cuda_from_xy(digits: str) -> tuple[int, int]:
    """Legacy backend tags: the last digit is the minor version (``cu126`` -> (12, 6),
    ``cu130`` -> (13, 0), ``xpu20253`` -> (2025, 3), ``cann80`` -> (8, 0)), as upstream."""
    return int(digits[:-1]), int(digits[-1])


@dataclass(frozen=True)
class Variant:
    """A parsed variant name.

    ``framework``: ``torch``, ``torch-stable-abi``, ``tvm-ffi`` (arch), ``torch-noarch``,
    ``mlx-noarch`` (noarch) or ``sdk``. ``backend``: ``cpu``, ``cuda``, ...; a noarch backend
    name or ``universal``; ``agnostic`` for an SDK variant without one. Arch fields are ``None``
    where the name has none. Legacy names have the implicit Python ``(3, 9)``/``abi3``.
    """

    name: str
    framework: str
    backend: str
    framework_version: tuple[int, int] | None = None  # torch / stable-abi / tvm-ffi (major, minor)
    backend_version: tuple[int, int] | None = None  # CUDA/ROCm/XPU/CANN (major, minor)
    cxx_abi: str | None = None  # "cxx11", "cxx98" or None
    cpu: str | None = None
    os: str | None = None
    python_version: tuple[int, int] | None = LEGACY_PYTHON  # None: no compiled parts (sdk)
    python_abi: str | None = "abi3"
    legacy: bool = True

    @property
    def is_noarch(self) -> bool:
        """``torch-<backend>`` or ``mlx-<backend>``: Python only, any machine of the backend."""
        return self.framework in ("torch-noarch", "mlx-noarch")

    @property
    def is_sdk(self) -> bool:
        return self.framework == "sdk"

    @property
    def is_arch(self) -> bool:
        """A torch, stable-ABI or tvm-ffi build with compiled code for one CPU and OS."""
        return self.framework in ("torch", "torch-stable-abi", "tvm-ffi")

    @property
    def compute(self) -> str:
        """The compute tag as the legacy grammar writes it (``cu130``, ``cpu``, ...)."""
        if self.is_noarch:
            return self.backend
        return compute_tag(self.backend, self.backend_version)

    def __str__(self) -> str:
        return self.name


def compute_tag(backend: str, version: tuple[int, int] | None) -> str:
    """The backend as it appears in legacy variant names: ``cu130``, ``rocm70``, ``cpu``, ..."""
    prefix = COMPUTE_PREFIXES.get(backend)
    if prefix is None or version is None:
        return backend
    return f"{prefix}{version[0]}{version[1]}"


def is_variant_name(name: str) -> bool:
    """Whether :func:`parse_variant` accepts ``name``."""
    try:
        parse_variant(name)
    except ValueError:
        return False
    return True


def _bad(name: str, why: str = "") -> ValueError:
    return ValueError(f"not a kernel variant name: {name!r}" + (f" ({why})" if why else ""))


def parse_variant(name: str) -> Variant:
    """Parse a variant name of either grammar; raise ``ValueError`` naming the problem."""
    head = name.split("-", 1)[0]
    if head == "sdk":
        return _parse_sdk(name)
    if head in ("torch", "mlx") and "-" in name:
        rest = name.split("-", 1)[1]
        if rest in NOARCH_BACKENDS and not (head == "mlx" and rest == "universal"):
            return Variant(name=name, framework=f"{head}-noarch", backend=rest,
                           python_version=None, python_abi=None, legacy=head == "torch")
    new = _NEW_FRAMEWORK_RE.match(name)
    if new:
        return _parse_new(name, new)
    return _parse_legacy(name)


def _parse_legacy(name: str) -> Variant:
    m = _LEGACY_ARCH_RE.match(name)
    if not m:
        raise _bad(name)
    backend, bver = _parse_compute(m.group("compute"), name)
    _check_system(m.group("cpu"), m.group("os"), name)
    if m.group("stable"):
        framework, fv = "torch-stable-abi", from_xy(m.group("sv"))
    elif m.group("tvm"):
        framework, fv = "tvm-ffi", from_xy(m.group("tv"))
    else:
        framework, fv = "torch", from_xy(m.group("torch"))
    if m.group("abi") and framework != "torch":
        raise _bad(name, f"{framework} names carry no C++ ABI tag")
    return Variant(name=name, framework=framework, backend=backend, framework_version=fv,
                   backend_version=bver, cxx_abi=m.group("abi"), cpu=m.group("cpu"),
                   os=m.group("os"))


def _parse_compute(compute: str, name: str) -> tuple[str, tuple[int, int] | None]:
    if compute in PLAIN_BACKENDS:
        return compute, None
    for backend, prefix in COMPUTE_PREFIXES.items():
        digits = compute[len(prefix):]
        if compute.startswith(prefix) and digits.isdigit() and len(digits) >= 2:
            if backend == "rocm" and digits == "714":  # the one two-digit ROCm minor, as upstream
                return backend, (7, 14)
            return backend, cuda_from_xy(digits)
    raise _bad(name, f"unknown backend {compute!r}")


def _check_system(cpu: str, os: str, name: str) -> None:
    if cpu not in CPUS or os not in OSES:
        raise _bad(name, f"unknown system {cpu}-{os}")


def _dotted(text: str) -> tuple[int, int]:
    m = _DOTTED_RE.match(text)
    assert m is not None  # the callers' regexes only pass X.Y
    return int(m.group(1)), int(m.group(2))


def _parse_tail(tail: str, name: str) -> tuple[str | None, tuple[int, int] | None,
                                              tuple[int, int], str, str, str]:
    """``<backend>[-<X.Y>]-cpython-<X.Y>-<abi>-<cpu>-<os>`` of a 0.19-grammar name."""
    m = _TAIL_RE.match(tail)
    if not m:
        raise _bad(name)
    backend, bv = m.group("backend"), m.group("bv")
    if backend is not None and not (
            (backend in PLAIN_BACKENDS and bv is None)
            or (backend in COMPUTE_PREFIXES and bv is not None)):
        raise _bad(name, f"unknown backend {backend + ('-' + bv if bv else '')!r}")
    py, pyabi = _dotted(m.group("py")), m.group("pyabi")
    if pyabi == "abi3t" and py < ABI3T_MIN_PYTHON:
        raise _bad(name, "abi3t needs cpython-3.15 or later")
    _check_system(m.group("cpu"), m.group("os"), name)
    return backend, (_dotted(bv) if bv else None), py, pyabi, m.group("cpu"), m.group("os")


def _parse_new(name: str, m: re.Match[str]) -> Variant:
    framework = ("torch-stable-abi" if m.group("stable") else
                 "tvm-ffi" if m.group("tvm") else "torch")
    if m.group("abi") and framework != "torch":
        raise _bad(name, f"{framework} names carry no C++ ABI tag")
    backend, bver, py, pyabi, cpu, os = _parse_tail(m.group("rest"), name)
    if backend is None:
        raise _bad(name, "missing backend")
    return Variant(name=name, framework=framework, backend=backend,
                   framework_version=_dotted(m.group("v")), backend_version=bver,
                   cxx_abi=m.group("abi"), cpu=cpu, os=os, python_version=py,
                   python_abi=pyabi, legacy=False)


def _parse_sdk(name: str) -> Variant:
    if name == "sdk":
        return Variant(name=name, framework="sdk", backend="agnostic", python_version=None,
                       python_abi=None, legacy=False)
    rest = name[len("sdk-"):]
    if "cpython-" not in rest:
        if rest not in NOARCH_BACKENDS or rest == "universal":
            raise _bad(name, f"unknown SDK backend {rest!r}")
        return Variant(name=name, framework="sdk", backend=rest, python_version=None,
                       python_abi=None, legacy=False)
    backend, bver, py, pyabi, cpu, os = _parse_tail(rest, name)
    return Variant(name=name, framework="sdk", backend=backend or "agnostic",
                   backend_version=bver, cpu=cpu, os=os, python_version=py, python_abi=pyabi,
                   legacy=False)


# --- formatting ---------------------------------------------------------------------------------


def _backend_version(backend: str, backend_version: str | None) -> tuple[int, int] | None:
    if backend not in COMPUTE_PREFIXES:
        return None
    if backend_version is None:
        raise ValueError(f"backend {backend} needs a version")
    if backend == "xpu":  # "2025.3.2" -> (2025, 3)
        parts = backend_version.split(".")
        return int(parts[0]), int(parts[1] if len(parts) > 1 else "0")
    return major_minor(backend_version)


def _arch_tail(backend: str, bver: tuple[int, int] | None, cpu: str, os: str,
               grammar: Grammar, python: tuple[int, int], abi: str) -> str:
    if grammar == "legacy":
        if (python, abi) != (LEGACY_PYTHON, "abi3"):
            raise ValueError(f"the legacy grammar has no cpython-{python[0]}.{python[1]}-{abi}; "
                             "use the 0.19 grammar")
        return f"{compute_tag(backend, bver)}-{cpu}-{os}"
    spelled = backend if bver is None else f"{backend}-{bver[0]}.{bver[1]}"
    return f"{spelled}-cpython-{python[0]}.{python[1]}-{abi}-{cpu}-{os}"


def format_tvm_ffi_variant(tvm_ffi_version: str, backend: str, backend_version: str | None,
                           cpu: str, os: str, *, grammar: Grammar = BUILD_NAME_GRAMMAR,
                           python: tuple[int, int] = LEGACY_PYTHON, abi: str = "abi3") -> str:
    """Name of a tvm-ffi build: ``tvm-ffi01-cpu-x86_64-linux``, ``tvm-ffi01-cu126-x86_64-linux``
    (0.19 grammar: ``tvm-ffi-0.1-cpu-cpython-3.9-abi3-x86_64-linux``); no torch version."""
    tail = _arch_tail(backend, _backend_version(backend, backend_version), cpu, os, grammar,
                      python, abi)
    v = major_minor(tvm_ffi_version)
    head = f"tvm-ffi{xy(tvm_ffi_version)}" if grammar == "legacy" else f"tvm-ffi-{v[0]}.{v[1]}"
    return f"{head}-{tail}"


def format_torch_variant(
    torch_version: str,
    backend: str,
    backend_version: str | None,
    cpu: str,
    os: str,
    *,
    stable_abi: str | None = None,
    grammar: Grammar = BUILD_NAME_GRAMMAR,
    python: tuple[int, int] = LEGACY_PYTHON,
    abi: str = "abi3",
    cxx_abi: str | None = "default",
) -> str:
    """Name of an arch build: ``torch213-cxx11-cpu-x86_64-linux``,
    ``torch214-cxx11-cu130-x86_64-linux``, ``torch-stable-abi211-cu126-x86_64-linux``; in the
    0.19 grammar ``torch-2.13-cxx11-cpu-cpython-3.9-abi3-x86_64-linux`` and so on. ``cxx_abi``
    ``"default"``: the builders' tag (``cxx11`` on Linux, none elsewhere)."""
    tail = _arch_tail(backend, _backend_version(backend, backend_version), cpu, os, grammar,
                      python, abi)
    if stable_abi is not None:
        s = major_minor(stable_abi)
        head = (f"torch-stable-abi{xy(stable_abi)}" if grammar == "legacy"
                else f"torch-stable-abi-{s[0]}.{s[1]}")
        return f"{head}-{tail}"
    t = major_minor(torch_version)
    head = f"torch{xy(torch_version)}" if grammar == "legacy" else f"torch-{t[0]}.{t[1]}"
    if cxx_abi == "default":
        cxx_abi = "cxx11" if os == "linux" else None
    abi_tag = f"-{cxx_abi}" if cxx_abi else ""
    return f"{head}{abi_tag}-{tail}"


def to_grammar(name: str, grammar: Grammar) -> str:
    """``name`` rewritten in ``grammar`` (noarch and SDK names are the same in both)."""
    v = parse_variant(name)
    if not v.is_arch or v.legacy == (grammar == "legacy"):
        return name
    assert v.framework_version is not None and v.cpu is not None and v.os is not None
    fv = f"{v.framework_version[0]}.{v.framework_version[1]}"
    bv = None if v.backend_version is None else f"{v.backend_version[0]}.{v.backend_version[1]}"
    py = v.python_version or LEGACY_PYTHON
    if v.framework == "tvm-ffi":
        return format_tvm_ffi_variant(fv, v.backend, bv, v.cpu, v.os, grammar=grammar,
                                      python=py, abi=v.python_abi or "abi3")
    return format_torch_variant(fv, v.backend, bv, v.cpu, v.os, grammar=grammar, python=py,
                                abi=v.python_abi or "abi3", cxx_abi=v.cxx_abi,
                                stable_abi=fv if v.framework == "torch-stable-abi" else None)
