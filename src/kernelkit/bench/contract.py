"""The benchmark-script contract (upstream ``kernels.benchmark.Benchmark``, 0.19) and its cases.

A script ``benchmarks/benchmark*.py`` defines subclasses of ``Benchmark``. Each method
``benchmark_<case>()`` is one case: the runner makes a fresh instance, sets ``kernel`` (the
loaded kernel module) and ``device`` (``"cpu"``, ``"cuda"``...), seeds the random generators
when the class sets ``seed``, calls ``setup_<case>()`` if it exists (else ``setup()``), runs
``benchmark_<case>()``, which leaves its result in ``self.out``, and compares that with what
``verify_<case>()`` returns (the reference). These are upstream's rules; upstream ignores the
kernelkit additions below, so one script serves both runners:

- ``bytes_<case>()`` / ``flops_<case>()`` (called after setup): the bytes the case moves and
  the floating-point operations it does, for the roofline point;
- class attributes ``atol`` / ``rtol``: the tolerance of the comparison (upstream's fixed
  ``atol=1e-2``, ``rtol=1e-5`` by default; integer and bool results must be equal).

A script imports the base class as ``from kernels.benchmark import Benchmark``. With upstream
``kernels`` installed that is upstream's class, and the runner accepts it; without it, the
runner resolves that one import to :class:`Benchmark` below while the script is imported
(:func:`kernels_benchmark_shim`), and nowhere else.
"""

from __future__ import annotations

import contextlib
import importlib.util
import sys
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

ATOL = 1e-2  # upstream's comparison: torch.allclose(out, reference, atol=1e-2)
RTOL = 1e-5


class Benchmark:
    """Base class of a benchmark script's classes (the contract of upstream's class of the
    same name; see the module docstring)."""

    seed: int | None = None
    device: str = "cpu"

    def __init__(self) -> None:
        self.kernel: Any = None
        self.out: Any = None

    def setup(self) -> None:
        """Override: create the inputs (and ``self.out``) as attributes."""


@dataclass(frozen=True)
class Case:
    """One ``benchmark_<case>`` method of one class, with its optional companions' names."""

    cls: type
    name: str  # the <case> part

    @property
    def label(self) -> str:
        return f"{self.cls.__name__}.{self.name}"

    def method(self, instance: object, prefix: str) -> Callable[[], Any] | None:
        fn = getattr(instance, f"{prefix}_{self.name}", None)
        return fn if callable(fn) else None


def base_classes() -> tuple[type, ...]:
    """The classes a benchmark class may derive from: kernelkit's, and upstream's if it is
    installed (not imported unless it is)."""
    bases: list[type] = [Benchmark]
    if "kernels.benchmark" in sys.modules or _upstream_installed():
        with contextlib.suppress(ImportError):
            from kernels.benchmark import Benchmark as Upstream  # type: ignore[import-untyped]

            bases.append(Upstream)
    return tuple(bases)


def _upstream_installed() -> bool:
    mod = sys.modules.get("kernels")
    if mod is not None:
        return not getattr(mod, "__kernelkit_shim__", False)
    try:
        return importlib.util.find_spec("kernels") is not None
    except (ImportError, ValueError):
        return False


def benchmark_classes(module: types.ModuleType) -> list[type]:
    """The benchmark classes a script defines (imported ones are not its own), sorted by name."""
    bases = base_classes()
    found = [obj for obj in vars(module).values()
             if isinstance(obj, type) and issubclass(obj, bases) and obj not in bases
             and obj.__module__ == module.__name__]
    return sorted(found, key=lambda c: c.__name__)


def cases_of(cls: type) -> list[Case]:
    """Every ``benchmark_<case>`` method of ``cls`` (inherited ones too, as upstream), sorted."""
    names = [n for n in dir(cls) if n.startswith("benchmark_") and callable(getattr(cls, n))]
    return [Case(cls, n[len("benchmark_"):]) for n in sorted(names)]


@contextlib.contextmanager
def kernels_benchmark_shim() -> Iterator[bool]:
    """While a script is imported: if upstream ``kernels`` is not installed, make
    ``import kernels.benchmark`` give :class:`Benchmark`. The stand-in ``kernels`` package has
    nothing else and is removed afterwards, so no other code mistakes it for upstream. Yields
    whether the stand-in was installed."""
    if _upstream_installed():
        yield False
        return
    pkg = types.ModuleType("kernels", "kernelkit's stand-in for upstream `kernels` while a "
                                      "benchmark script is imported: only kernels.benchmark")
    pkg.__path__ = []
    pkg.__kernelkit_shim__ = True  # type: ignore[attr-defined]
    sub = types.ModuleType("kernels.benchmark")
    sub.Benchmark = Benchmark  # type: ignore[attr-defined]
    pkg.benchmark = sub  # type: ignore[attr-defined]
    sys.modules["kernels"], sys.modules["kernels.benchmark"] = pkg, sub
    try:
        yield True
    finally:
        for name in ("kernels.benchmark", "kernels"):
            if sys.modules.get(name) in (pkg, sub):
                del sys.modules[name]
