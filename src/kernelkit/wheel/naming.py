"""Wheel names and tags for kernel variants (pure).

Scheme (one wheel per variant; the torch build is encoded in a PEP 440 *local version label*
because wheel tags cannot express torch or CUDA versions):

Examples (name ``img2gray``, version ``1.2.0``)::

    torch213-cxx11-cpu-x86_64-linux
        img2gray-1.2.0+torch213cpu-cp39-abi3-manylinux_2_28_x86_64.whl
    torch214-cxx11-cu130-x86_64-linux
        img2gray-1.2.0+torch214cu130-cp39-abi3-manylinux_2_28_x86_64.whl
    torch-stable-abi29-cu126-aarch64-linux
        img2gray-1.2.0+stableabi29cu126-cp39-abi3-manylinux_2_28_aarch64.whl
    torch212-metal-aarch64-darwin
        img2gray-1.2.0+torch212metal-cp39-abi3-macosx_11_0_arm64.whl
    torch-cuda (noarch)
        img2gray-1.2.0+cuda-py3-none-any.whl
    torch-universal
        img2gray-1.2.0-py3-none-any.whl

``Requires-Dist: torch==X.Y.*`` for torch builds, ``torch>=X.Y`` for stable-ABI builds and
``torch`` otherwise. A ``cxx98`` build adds ``cxx98`` to the label.

Names: the project (distribution) name is the repository's name (``acme/img2gray`` ->
``img2gray``) and the top-level package its Python form (``flash-attn`` -> ``flash_attn``);
hub metadata never names anything a wheel installs. :func:`check_package_name` refuses a
package that is not an identifier or would shadow a module of the standard library
(``sys.stdlib_module_names``), one that Python runs at start-up (``sitecustomize``,
``usercustomize``), torch, the packaging tools, or a top-level package that another
installed distribution provides.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kernelkit.errors import KernelkitError
from kernelkit.util.quote import is_python_identifier
from kernelkit.variants.name import Variant, parse_variant

_MANYLINUX = "manylinux_2_28"
_MACOS = "macosx_11_0"


@dataclass(frozen=True)
class WheelTags:
    python: str
    abi: str
    platform: str
    local: str | None
    purelib: bool
    torch_requirement: str

    @property
    def tag(self) -> str:
        return f"{self.python}-{self.abi}-{self.platform}"


def local_label(v: Variant) -> str | None:
    if v.is_noarch:
        return None if v.backend == "universal" else v.backend
    assert v.framework_version is not None
    fv = f"{v.framework_version[0]}{v.framework_version[1]}"
    prefix = {"torch": "torch", "torch-stable-abi": "stableabi", "tvm-ffi": "tvmffi"}[v.framework]
    abi = "cxx98" if v.cxx_abi == "cxx98" else ""
    return f"{prefix}{fv}{abi}{v.compute}"


def platform_tag(v: Variant) -> str:
    if v.os == "linux":
        return f"{_MANYLINUX}_{v.cpu}"
    if v.os == "darwin":
        return f"{_MACOS}_{'arm64' if v.cpu == 'aarch64' else v.cpu}"
    if v.os == "windows":
        return "win_amd64" if v.cpu == "x86_64" else "win_arm64"
    raise ValueError(f"variant {v.name}: no wheel platform tag for os {v.os!r}")


def torch_requirement(v: Variant) -> str:
    if v.is_noarch or v.framework == "tvm-ffi" or v.framework_version is None:
        return "torch"
    major, minor = v.framework_version
    if v.framework == "torch-stable-abi":
        return f"torch>={major}.{minor}"
    return f"torch=={major}.{minor}.*"


def wheel_tags(variant: str) -> WheelTags:
    """The tags of ``variant``'s wheel; ``ValueError`` for MLX and SDK variants (no torch
    package to make a wheel of)."""
    v = parse_variant(variant)
    if v.framework == "torch-noarch":
        return WheelTags("py3", "none", "any", local_label(v), True, torch_requirement(v))
    if not v.is_arch:
        raise ValueError(f"variant {variant}: kernelkit makes wheels of torch and tvm-ffi "
                         "variants only")
    py = v.python_version or (3, 9)
    return WheelTags(f"cp{py[0]}{py[1]}", v.python_abi or "abi3", platform_tag(v), local_label(v),
                     False, torch_requirement(v))


def distribution_name(name: str) -> str:
    """The wheel file name form of a project name (PEP 427: runs of ``-_.`` become ``_``)."""
    return re.sub(r"[-_.]+", "_", name).lower()


def full_version(version: str, tags: WheelTags) -> str:
    return f"{version}+{tags.local}" if tags.local else version


def wheel_filename(name: str, version: str, tags: WheelTags) -> str:
    return f"{distribution_name(name)}-{full_version(version, tags)}-{tags.tag}.whl"


#: Never a wheel's top-level package, whatever is installed: Python runs the first two at
#: every start-up; the others are what a kernel wheel is installed beside.
RESERVED_PACKAGES = frozenset({
    "sitecustomize", "usercustomize", "torch", "torchgen", "functorch", "triton", "kernels",
    "kernelkit", "pip", "setuptools", "pkg_resources", "wheel", "_distutils_hack",
})


def project_name(repo_id: str) -> str:
    """The distribution name of a wheel of ``repo_id``: the repository's name."""
    return repo_id.split("/", 1)[1]


def package_name(repo_id: str) -> str:
    """The top-level package of a wheel of ``repo_id``: the name, lowercase, ``-``/``.`` as
    ``_``."""
    return re.sub(r"[-.]+", "_", project_name(repo_id)).lower()


@dataclass(frozen=True)
class Installed:
    """An installed distribution: its name, and the kernel repository it is a kernelkit wheel
    of (its ``.dist-info/kernelkit.json``; ``None`` for every other distribution)."""

    dist: str
    kernel: str | None = None


def shadowing(package: str, repo_id: str,
              installed: Mapping[str, Sequence[Installed]]) -> str | None:
    """Why ``package`` must not be the top-level package of a wheel of ``repo_id`` (``None``:
    it may be); ``installed`` maps top-level packages to the distributions providing them."""
    if not is_python_identifier(package):
        return "is not a Python identifier"
    if package in RESERVED_PACKAGES:
        return "would shadow a module Python or torch relies on"
    stdlib: frozenset[str] = getattr(sys, "stdlib_module_names", frozenset())
    if package in stdlib:
        return "would shadow a module of Python's standard library"
    # an earlier wheel of this very kernel may be replaced; any other provider may not
    others = sorted({i.dist for i in installed.get(package, ()) if i.kernel != repo_id})
    if others:
        return f"is already provided by the installed distribution {', '.join(others)}"
    return None


def check_package_name(package: str, repo_id: str,
                       installed: Mapping[str, Sequence[Installed]]) -> str:
    """``package`` if :func:`shadowing` finds nothing, else a ``KernelkitError``."""
    why = shadowing(package, repo_id, installed)
    if why is not None:
        raise KernelkitError(
            f"refusing to write a wheel whose top-level package is {package!r}: it {why}",
            hint="the package is named after the repository; publish the kernel under another "
                 "name (or load it with get_kernel, which imports it under a private name)")
    return package


#: The file in a kernelkit wheel's ``.dist-info`` that names the kernel it was made from.
KERNEL_RECORD = "kernelkit.json"


def installed_packages() -> dict[str, list[Installed]]:
    """Top-level package -> the distributions providing it, in this environment."""
    import json
    from importlib.metadata import distribution, packages_distributions

    def kernel_of(dist: str) -> str | None:
        try:
            text = distribution(dist).read_text(KERNEL_RECORD)
            repo = json.loads(text).get("repo_id") if text else None
        except (ValueError, OSError, AttributeError):
            return None
        return repo if isinstance(repo, str) else None

    return {top: [Installed(d, kernel_of(d)) for d in dists]
            for top, dists in packages_distributions().items()}
