"""Look at this machine once, for planning: cores, the system CUDA toolkit, and where each
target's torch (and CUDA toolkit) wheels come from, or why pip cannot find them here."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kernelkit.builder.plan.plan_matrix import BUILDABLE, HostFacts
from kernelkit.builder.plan.resources import this_machine
from kernelkit.builder.toolchain.build_tools import build_tools_problem
from kernelkit.builder.toolchain.toolkit import CudaToolkit, find_cuda_toolkit
from kernelkit.builder.toolchain.wheel_sources import index_reachable, wheel_available
from kernelkit.settings import process_environ
from kernelkit.util.versions import major_minor_text
from kernelkit.variants.matrix import BuildTarget, Matrix, load_matrix


def gather_facts(targets: Sequence[BuildTarget], *, system: str,
                 environ: Mapping[str, str] | None = None,
                 matrix: Matrix | None = None) -> HostFacts:
    """Cores, memory, the system CUDA toolkit, and where each target's wheels come from."""
    matrix = matrix or load_matrix()
    toolkit = find_cuda_toolkit(environ)
    sources: dict[str, str] = {}
    missing: dict[str, str] = {}
    for t in targets:
        if t.pin is None or t.kind in ("noarch", "tvm-ffi") or t.backend not in BUILDABLE:
            continue
        src = wheel_available("torch", t.pin.torch, extra_index=t.pin.index_url)
        if src is None:
            missing[t.variant] = _unavailable(t.pin.requirement, t.pin.index_url)
            continue
        sources[t.variant] = src
        problem = _toolkit_problem(t, toolkit, matrix)
        if problem:
            missing[t.variant] = problem
    machine = this_machine()
    return HostFacts(system, machine.cores, toolkit, sources=sources, missing=missing,
                     memory_available=machine.memory_available,
                     tools_problem=build_tools_problem(process_environ() if environ is None
                                                       else environ))


def _toolkit_problem(t: BuildTarget, toolkit: CudaToolkit | None, matrix: Matrix) -> str | None:
    """Why the CUDA toolkit of ``t`` cannot be had here (``None``: it can, or none is needed)."""
    cuda = t.backend_version if t.backend == "cuda" else None
    if not cuda or (toolkit and major_minor_text(toolkit.version) == major_minor_text(cuda)):
        return None
    assert t.pin is not None
    tw = matrix.toolkit_wheels_for(cuda)
    want = major_minor_text(cuda)
    if tw is not None and wheel_available(tw.packages[0], f"{want}.*",
                                          extra_index=t.pin.index_url):
        return None
    have = f"system nvcc is {toolkit.version}" if toolkit else "no system nvcc"
    return f"needs CUDA {want}: {have} and {_unavailable('the toolkit wheels', t.pin.index_url)}"


def _unavailable(what: str, index: str | None) -> str:
    text = f"{what} not available from pip's configured sources"
    if index is None:
        return text
    return text + (f" nor {index}" if index_reachable(index) else
                   f" and {index} is unreachable (offline?)")
