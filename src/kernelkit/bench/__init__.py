"""``kernelkit benchmark``: run a kernel's ``benchmarks/benchmark*.py`` scripts (upstream's
contract), verified, timed with statistics, against same-run baselines and this machine's
measured roofs. (kernelkit's own performance measurements are the repository's top-level
``benchmarks/`` folder, not this package.)

Modules: ``contract`` (the ``Benchmark`` base class, cases, the ``kernels.benchmark``
stand-in), ``scripts`` (find and import scripts), ``source`` (local build or hub version),
``verify`` (output against reference), ``stats`` (pure statistics), ``timing`` and ``cuda``
(timers), ``hardware`` (machine facts, measured roofs), ``runner`` (cases and baselines),
``api`` (``run_benchmark``), ``results`` (values and JSON), ``plot`` (matplotlib charts),
``stored`` (results carried in a project or on a hub branch).

``from kernelkit.bench import Benchmark`` stays light: it imports no torch.
"""

from kernelkit.bench.contract import Benchmark

__all__ = ["Benchmark"]
