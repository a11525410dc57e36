"""Plan one variant build (pure): its name, op namespace, CMake definitions, CUDA capabilities.

Every check that can fail before compiling happens here, so a bad request fails fast with a
message that names the variant and says what to do.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kernelkit.builder.toolchain.probe import TorchEnv
from kernelkit.builder.toolchain.toolkit import CudaToolkit
from kernelkit.errors import BuildError, KernelkitError, NotBuildableError
from kernelkit.generate import cuda_archs
from kernelkit.generate.ids import ops_name
from kernelkit.manifest.model import (
    BUILDABLE_BACKENDS,
    Manifest,
    TorchFramework,
    TvmFfi,
    Version,
)
from kernelkit.util.versions import major_minor_text
from kernelkit.variants.matrix import TargetKind
from kernelkit.variants.name import format_torch_variant, format_tvm_ffi_variant


@dataclass(frozen=True)
class VariantPlan:
    variant: str
    backend: str
    ops_name: str
    unique_id: str
    cxx_standard: int
    # CUDA only: final capabilities per (not skipped) component, and metadata's backend.archs.
    component_archs: dict[str, list[str]] = field(default_factory=dict)
    archs: tuple[str, ...] | None = None
    cuda_version: str | None = None
    stable_abi: str | None = None  # "2.11": compiled against torch's stable C ABI of 2.11

    def cmake_defines(self) -> dict[str, str]:
        defines = {"KK_BACKEND": self.backend}
        for name, caps in sorted(self.component_archs.items()):
            defines[f"KK_CUDA_ARCHS_{name}"] = ";".join(caps)
        return defines


def stable_abi_version(manifest: Manifest, backend: str) -> str | None:
    """The ``[torch.stable-abi]`` version ``backend`` is built for ("2.11"), or ``None``."""
    fw = manifest.framework
    version = fw.stable_abi_for(backend) if isinstance(fw, TorchFramework) else None
    return major_minor_text(str(version)) if version is not None else None


def interpreter_kind(manifest: Manifest, backend: str) -> TargetKind:
    """What kind of variant a compile of ``backend`` makes: tvm-ffi, stable-abi or arch."""
    if isinstance(manifest.framework, TvmFfi):
        return "tvm-ffi"
    return "stable-abi" if stable_abi_version(manifest, backend) is not None else "arch"


def variant_name(manifest: Manifest, env: TorchEnv, backend: str) -> str:
    """The variant ``env`` builds for ``backend``: ``tvm-ffi<VV>-...`` for a ``[tvm-ffi]``
    kernel (VV: the environment's apache-tvm-ffi), ``torch-stable-abi<VV>-...`` for a backend
    under ``[torch.stable-abi]``, else ``torch<VV>-cxx11-...``."""
    cuda_version = env.cuda if backend == "cuda" else None
    if isinstance(manifest.framework, TvmFfi):
        return format_tvm_ffi_variant(env.tvm_ffi or "0", backend, cuda_version, env.machine,
                                      env.os)
    return format_torch_variant(env.torch_release, backend, cuda_version, env.machine, env.os,
                                stable_abi=stable_abi_version(manifest, backend))


def check_stable_abi(manifest: Manifest, env: TorchEnv, backend: str, variant: str) -> None:
    """A stable-ABI variant needs a torch at least as new as its stable-ABI version."""
    stable = stable_abi_version(manifest, backend)
    if stable is not None and _major_minor(env.torch_release) < Version.parse(stable):
        raise NotBuildableError(f"variant {variant}",
                                f"torch {env.torch_release} of {env.python} is older than "
                                f"[torch.stable-abi] {backend} = \"{stable}\"",
                                hint=f"build with an environment whose torch is >= {stable}")


def _major_minor(version: str) -> Version:
    return Version.parse(major_minor_text(version))


def check_torch_bounds(manifest: Manifest, env: TorchEnv, variant: str) -> None:
    """``[torch] minver/maxver`` (inclusive; ``maxver = "2.12"`` admits 2.12.x)."""
    torch = manifest.framework
    if not isinstance(torch, TorchFramework):
        return  # [tvm-ffi] has no torch bounds
    have = Version.parse(env.torch_release)
    where = f"{manifest.path or 'build.toml'}: [torch]"
    low = f">={torch.minver}" if torch.minver is not None else ""
    high = ""
    if torch.maxver is not None:  # inclusive on major.minor: maxver 2.12 admits 2.12.x
        major, minor = (*torch.maxver.parts, 0)[:2]
        high = f"<{major}.{minor + 1}"
    spec = "torch" + ",".join(b for b in (low, high) if b)
    install = (f"install {spec} in {env.python} (pip install '{spec}') or pass --python with "
               "such an environment")
    if torch.minver is not None and have < torch.minver:
        raise NotBuildableError(f"variant {variant}",
                                f"torch {env.torch_release} is older than {where} minver = "
                                f"\"{torch.minver}\"", hint=install)
    if torch.maxver is not None and _major_minor(env.torch_release) > torch.maxver:
        raise NotBuildableError(f"variant {variant}",
                                f"torch {env.torch_release} is newer than {where} maxver = "
                                f"\"{torch.maxver}\"", hint=install)


def check_backend(manifest: Manifest, env: TorchEnv, backend: str) -> None:
    where = manifest.path or "build.toml"
    if isinstance(manifest.framework, TvmFfi) and env.tvm_ffi is None:
        raise NotBuildableError(f"{where}", f"[tvm-ffi] kernels need apache-tvm-ffi, which "
                                f"{env.python} does not have",
                                hint=f"{env.python} -m pip install apache-tvm-ffi, or build "
                                "with --all/--variant (pinned environments)", who="machine")
    if not isinstance(manifest.framework, (TorchFramework, TvmFfi)):
        raise NotBuildableError(f"{where}", "only [torch] and [tvm-ffi] kernels are compiled "
                                "by kernelkit", who="unsupported")
    if backend not in manifest.general.backends:
        raise KernelkitError(f"{where}: backend {backend} is not in general.backends "
                             f"({', '.join(manifest.general.backends)})",
                             hint="add it to general.backends or build another backend")
    if backend not in BUILDABLE_BACKENDS:
        raise NotBuildableError(f"backend {backend}", "kernelkit builds only cpu and cuda "
                                "variants", hint="build this backend with upstream kernel-builder",
                                who="unsupported")
    if backend == "cuda" and not env.cuda:
        raise NotBuildableError("backend cuda", f"torch {env.torch_version} of {env.python} "
                                "has no CUDA support", hint="pass --python with a CUDA torch")


def check_toolkit(manifest: Manifest, env: TorchEnv, toolkit: CudaToolkit, variant: str) -> None:
    if _major_minor(toolkit.version) != _major_minor(env.cuda or ""):
        raise NotBuildableError(f"variant {variant}", f"the CUDA toolkit at {toolkit.root} is "
                                f"{toolkit.version} but torch was built with CUDA {env.cuda}",
                                hint=f"install CUDA {env.cuda} and point CUDA_HOME at it")
    bounds = manifest.general.cuda
    have = _major_minor(toolkit.version)
    if bounds and ((bounds.minver and have < bounds.minver)
                   or (bounds.maxver and have > bounds.maxver)):
        raise NotBuildableError(f"variant {variant}", f"CUDA {toolkit.version} is outside "
                                f"[general.cuda] minver/maxver ({bounds.minver}, {bounds.maxver})")


def plan_cuda_archs(manifest: Manifest, targets: list[str], toolkit_version: str,
                    variant: str) -> dict[str, list[str]]:
    """Final capabilities of each CUDA component (components needing a newer CUDA skipped)."""
    have = _major_minor(toolkit_version)
    out: dict[str, list[str]] = {}
    for comp in sorted(manifest.kernels_for("cuda"), key=lambda k: k.name):
        if comp.cuda_minver is not None and have < comp.cuda_minver:
            continue
        declared = list(comp.cuda_capabilities) if comp.cuda_capabilities else None
        caps = cuda_archs.component_capabilities(declared, targets)
        if not caps:
            raise NotBuildableError(
                f"variant {variant}", f"CUDA kernel: {comp.name}, empty set of capabilities "
                f"after intersection of {declared} with {targets}", who="project",
                hint=f"fix [kernel.{comp.name}] cuda-capabilities in build.toml (each must be "
                     f"one of {targets})")
        out[comp.name] = caps
    return out


def plan_variant(manifest: Manifest, env: TorchEnv, backend: str, uid: str, *,
                 toolkit: CudaToolkit | None = None,
                 cuda_capabilities: list[str] | None = None,
                 planned: str | None = None) -> VariantPlan:
    """The complete plan of one variant; raises before any compile if it cannot be built.
    ``planned``: the variant the build plan decided on; an environment that would build
    another one (a pinned environment that drifted) is an error, not a silent rename."""
    check_backend(manifest, env, backend)
    variant = variant_name(manifest, env, backend)
    if planned is not None and variant != planned:
        raise BuildError(planned, f"its environment ({env.python}) builds {variant} instead",
                         hint="rerun with --update-toolchain to repair the environment")
    check_torch_bounds(manifest, env, variant)
    check_stable_abi(manifest, env, backend, variant)
    tvm = isinstance(manifest.framework, TvmFfi)
    cxx = 17 if tvm or Version.parse(env.torch_release) < Version.parse("2.12") else 20
    stable = stable_abi_version(manifest, backend)
    plan = VariantPlan(variant=variant, backend=backend, unique_id=uid, cxx_standard=cxx,
                       ops_name=ops_name(manifest.general.python_name, backend, uid),
                       stable_abi=stable)
    if backend != "cuda":
        return plan
    if toolkit is None:
        raise NotBuildableError(f"variant {variant}", "no CUDA toolkit found",
                                hint="set CUDA_HOME or put nvcc on PATH")
    check_toolkit(manifest, env, toolkit, variant)
    targets = cuda_capabilities or cuda_archs.default_capabilities(toolkit.version)
    comps = plan_cuda_archs(manifest, targets, toolkit.version, variant)
    return VariantPlan(variant=variant, backend=backend, unique_id=uid, cxx_standard=cxx,
                       ops_name=plan.ops_name, component_archs=comps,
                       archs=tuple(cuda_archs.metadata_archs(list(comps.values()))),
                       cuda_version=toolkit.version, stable_abi=stable)
