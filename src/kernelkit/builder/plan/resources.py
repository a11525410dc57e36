"""How much of this machine a build may use: parallel variants, ninja jobs, nvcc threads.

A CUDA translation unit compiled for many architectures can take several GB, and nvcc
compiles those architectures one after another unless given ``--threads``; a CPU unit against
torch's headers takes about one GB. :func:`fit` (pure) spreads the cores over variants, jobs
and nvcc threads so the machine is busy without running out of memory; every number can be
overridden. :func:`this_machine` reads the cores this process may use and the memory
available now.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

GIB = 1 << 30
# Peak resident memory of one compile process (measured on torch 2.13/2.14 headers: ~0.8 GB
# for a CPU unit, 1.5-3 GB for one nvcc unit, plus ~0.7 GB per extra concurrent arch thread).
CPU_UNIT_MEMORY = 1 * GIB
CUDA_UNIT_MEMORY = 2 * GIB
NVCC_THREAD_MEMORY = GIB * 7 // 10


@dataclass(frozen=True)
class Machine:
    cores: int
    memory_available: int  # bytes


@dataclass(frozen=True)
class Fit:
    parallel: int  # variants built at once
    jobs: int  # ninja jobs per variant
    nvcc_threads: int  # nvcc --threads per CUDA unit


def this_machine() -> Machine:
    """The cores this process may run on and the memory available now (``MemAvailable``)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return Machine(max(1, cores), _memory_available())


def _memory_available() -> int:
    try:
        for line in Path("/proc/meminfo").read_text(encoding="ascii").splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):
        return 8 * GIB


def fit(machine: Machine, *, variants: int, cuda_units: int = 0, cuda_archs: int = 1,
        parallel: int | None = None, jobs: int | None = None,
        nvcc_threads: int | None = None) -> Fit:
    """Spread ``machine`` over ``variants`` builds. ``cuda_units`` is the number of CUDA
    sources of one variant (0 for a CPU-only plan), ``cuda_archs`` how many architectures each
    is compiled for. Overrides win; everything is at least 1."""
    per_unit = CUDA_UNIT_MEMORY if cuda_units else CPU_UNIT_MEMORY
    slots = max(1, min(machine.cores, machine.memory_available // per_unit))
    par = parallel or max(1, min(variants, slots))
    job = jobs or max(1, slots // par)
    if nvcc_threads:
        return Fit(par, job, nvcc_threads)
    if not cuda_units:
        return Fit(par, job, 1)
    concurrent = max(1, min(job, cuda_units))
    spare_cores = max(1, machine.cores // (par * concurrent))
    spare_memory = machine.memory_available // (par * concurrent) - CUDA_UNIT_MEMORY
    by_memory = 1 + max(0, spare_memory) // NVCC_THREAD_MEMORY
    return Fit(par, job, max(1, min(cuda_archs, spare_cores, by_memory)))
