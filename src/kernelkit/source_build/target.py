"""What a build from source would make here, or why it cannot: decided before any download.

:func:`plan_target` looks only at this machine and at the names of the published variants (no
hub call, nothing downloaded), so a build that cannot work is refused in one line that says
what to install: no torch; a backend kernelkit does not build; a project that publishes no
variant of this machine's backend; missing build tools (cmake/ninja/pyelftools of the
``build`` extra, a C/C++ compiler: ``builder/toolchain/build_tools.py``); for CUDA, no ``nvcc``, an
``nvcc`` of another CUDA major than torch's, an ``nvcc`` that cannot compile for this GPU, or
no GPU to build for (``KERNELKIT_CUDA_CAPABILITIES`` names the GPUs it will run on instead).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from kernelkit.errors import NotBuildableError
from kernelkit.variants.host import System

#: the backends kernelkit compiles (``builder.plan_matrix.BUILDABLE``), on Linux
BUILDABLE = ("cpu", "cuda")


@dataclass(frozen=True)
class Target:
    """The variant a build here would make: its expected name (the builder decides the final
    one from the project: a torch or stable-ABI build), backend, the interpreter whose torch it
    builds against, and for CUDA the capabilities to compile and the toolkit's version."""

    variant: str
    backend: str
    python: Path
    cuda_capabilities: tuple[str, ...] | None = None
    toolkit: str | None = None

    def describe(self) -> str:
        caps = (f" for CUDA capabilities {', '.join(self.cuda_capabilities)}"
                if self.cuda_capabilities else "")
        return f"{self.variant}{caps}"


def plan_target(system: System, published: Sequence[str], *, what: str, python: Path,
                environ: Mapping[str, str]) -> Target:
    """The :class:`Target` of a build here, or ``NotBuildableError`` (one line, with what to
    install). ``what`` names the kernel in messages (``org/name@abc1234``)."""
    variant = system.arch_variant()
    if variant is None:
        raise NotBuildableError(what, "torch is not installed in this environment",
                                hint="install torch (the build is made against it)")
    if system.backend not in BUILDABLE or system.os != "linux":
        raise NotBuildableError(what, f"kernelkit builds {' and '.join(BUILDABLE)} variants "
                                f"on Linux; this machine is {system.describe()}",
                                who="unsupported",
                                hint="use a published variant, or another machine")
    _check_project_backend(system.backend, published, what)
    _check_tools(environ, what)
    if system.backend != "cuda":
        return Target(variant, system.backend, python)
    caps, toolkit = _cuda(system, environ, what)
    return Target(variant, "cuda", python, caps, toolkit)


def _backend_of(name: str) -> str | None:
    from kernelkit.variants.name import parse_variant

    try:
        return parse_variant(name).backend
    except ValueError:
        return None


def _check_project_backend(backend: str, published: Sequence[str], what: str) -> None:
    """The project must build for this backend at all: some published variant is for it."""
    backends = sorted({b for b in map(_backend_of, published) if b is not None})
    if backend in backends or "universal" in backends:
        return
    raise NotBuildableError(
        what, f"it publishes {', '.join(backends) or 'no'} variants only, so its sources "
        f"build no {backend} variant (this machine needs one)", who="project",
        hint="use a machine with one of those backends" + (
            ", or backend='cpu'" if "cpu" in backends else ""))


def _check_tools(environ: Mapping[str, str], what: str) -> None:
    from kernelkit.builder.toolchain.build_tools import build_tools_problem

    problems = []
    if importlib.util.find_spec("elftools") is None:
        problems.append("pyelftools is not installed (the check of the build needs it); pip "
                        "install 'kernelkit[build]'")
    tools = build_tools_problem(environ)
    if tools:
        problems.append(tools)
    if problems:
        raise NotBuildableError(what, "; ".join(problems),
                                hint="install what is named, then load it again")


def _cuda(system: System, environ: Mapping[str, str], what: str
          ) -> tuple[tuple[str, ...], str]:
    from kernelkit.builder.toolchain.toolkit import find_cuda_toolkit

    torch_cuda = ".".join(map(str, system.backend_version or ()))
    toolkit = find_cuda_toolkit(environ)
    if toolkit is None:
        raise NotBuildableError(what, "no CUDA toolkit (nvcc) found",
                                hint=f"install the CUDA {torch_cuda} toolkit (torch's) and set "
                                     "CUDA_HOME or put its nvcc on PATH")
    if system.backend_version and toolkit.version.split(".")[0] != str(system.backend_version[0]):
        raise NotBuildableError(what, f"nvcc {toolkit.version} ({toolkit.nvcc}) is not a CUDA "
                                f"{system.backend_version[0]} toolkit, which torch's CUDA "
                                f"{torch_cuda} needs", hint=f"install the CUDA {torch_cuda} "
                                "toolkit and set CUDA_HOME to it")
    caps = _capabilities(environ)
    for cap in caps:
        problem = unsupported_capability(cap, toolkit.version)
        if problem:
            raise NotBuildableError(what, f"nvcc {toolkit.version} cannot compile for "
                                    f"capability {cap}: {problem}",
                                    hint=f"install {problem.split('needs ', 1)[-1]}")
    return caps, toolkit.version


def _capabilities(environ: Mapping[str, str]) -> tuple[str, ...]:
    """``KERNELKIT_CUDA_CAPABILITIES`` when set, else this machine's GPUs' capabilities."""
    from kernelkit.generate.cuda_archs import parse_capabilities
    from kernelkit.settings import KERNELKIT_CUDA_CAPABILITIES

    given = KERNELKIT_CUDA_CAPABILITIES.read(environ)
    if given:
        try:
            return tuple(parse_capabilities(given))
        except ValueError as exc:
            raise NotBuildableError("KERNELKIT_CUDA_CAPABILITIES", str(exc),
                                    hint="e.g. KERNELKIT_CUDA_CAPABILITIES=9.0") from None
    found = visible_capabilities()
    if not found:
        raise NotBuildableError(
            "a CUDA variant", "no CUDA device is visible, so there is no GPU architecture to "
            "build for", hint="set KERNELKIT_CUDA_CAPABILITIES to the capabilities of the "
            "GPUs it will run on (e.g. 9.0), or load the CPU variant (backend='cpu')")
    return found


def visible_capabilities() -> tuple[str, ...]:
    """``major.minor`` of every visible CUDA device, sorted, without duplicates."""
    import torch

    if not torch.cuda.is_available():
        return ()
    caps = {torch.cuda.get_device_capability(i) for i in range(torch.cuda.device_count())}
    return tuple(f"{major}.{minor}" for major, minor in sorted(caps))


def _key(cap: str) -> tuple[int, int]:
    major, minor = cap.split("+")[0].rstrip("af").split(".")
    return int(major), int(minor)


def unsupported_capability(cap: str, toolkit: str) -> str | None:
    """Why CUDA ``toolkit`` cannot compile for ``cap`` (``None``: it can), from the toolkits'
    capability table (``generate.cuda_archs.DEFAULT_CAPABILITIES``): a capability above the
    toolkit's newest, or below its oldest."""
    from kernelkit.generate.cuda_archs import DEFAULT_CAPABILITIES, default_capabilities

    known = [_key(c) for c in default_capabilities(toolkit)]
    want = _key(cap)
    if want > max(known):
        newer = [minimum for minimum, caps in sorted(DEFAULT_CAPABILITIES)
                 if max(_key(c) for c in caps) >= want]
        needs = f"CUDA {newer[0][0]}.{newer[0][1]} or newer" if newer else "a newer CUDA"
        return f"it is newer than the toolkit knows; it needs {needs}"
    if want < min(known):
        older = [minimum for minimum, caps in sorted(DEFAULT_CAPABILITIES, reverse=True)
                 if min(_key(c) for c in caps) <= want]
        needs = f"CUDA {older[0][0]}.{older[0][1]}" if older else f"a CUDA older than {toolkit}"
        return f"the toolkit dropped it; it needs {needs}"
    return None
