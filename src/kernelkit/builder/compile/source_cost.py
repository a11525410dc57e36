"""What in a kernel's own sources makes them slow to compile, said after a build.

An umbrella header (``<torch/all.h>``, ``<torch/extension.h>``, ``<torch/torch.h>``,
``<ATen/ATen.h>``) declares every torch operator. A C++ unit parses it once; a CUDA unit parses
it in cudafe++, then in cicc once per GPU architecture, then in the host compile. Including
only the headers a kernel uses made the img2gray template's ten-architecture CUDA build 1.6x
faster on an H200 (docs/building.md), so a slow unit that includes one gets a hint naming the
file and the header. Reads the unit's source; runs nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path

UMBRELLAS = ("torch/all.h", "torch/extension.h", "torch/torch.h", "ATen/ATen.h")
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"]+)[>"]', re.MULTILINE)

# A unit faster than this is not worth a hint: the header is not what the build waits for.
MIN_SECONDS = 5.0


def umbrella_includes(source: str) -> list[str]:
    """The umbrella headers ``source`` includes itself (not through its own headers), in
    order."""
    return [h for h in _INCLUDE.findall(source) if h in UMBRELLAS]


def umbrella_hints(project: Path, unit_times: Mapping[str, float],
                   min_seconds: float = MIN_SECONDS) -> Iterator[tuple[str, str]]:
    """``(unit, hint)`` for each unit of ``unit_times`` (relative to ``project``, slowest
    first) that took at least ``min_seconds`` and includes an umbrella header. Units outside
    the project (a generated shim, a dependency) and unreadable files are passed over."""
    root = project.resolve()
    for unit, seconds in unit_times.items():
        if seconds < min_seconds:
            break
        path = (root / unit).resolve()
        if not path.is_relative_to(root) or not path.is_file():
            continue
        try:
            found = umbrella_includes(path.read_text(errors="replace"))
        except OSError:
            continue
        if not found:
            continue
        if path.suffix in (".cu", ".cuh"):
            how = ("cudafe++, cicc (once per GPU architecture) and the host compile all parse it",
                   "<ATen/core/Tensor.h>, <c10/cuda/CUDAGuard.h>, <c10/cuda/CUDAStream.h>",
                   "the img2gray template's ten-architecture CUDA build 1.6x faster")
        else:
            how = ("the compiler parses all of it", "<ATen/core/Tensor.h>, <ATen/Parallel.h>",
                   "the img2gray template's CPU kernel file compile 3.7x faster")
        yield unit, (f"{unit} took {seconds:.1f} s and includes <{found[0]}>, which declares "
                     f"every torch operator: {how[0]}. Including only the headers it uses "
                     f"(e.g. {how[1]}) made {how[2]} (docs/building.md)")
