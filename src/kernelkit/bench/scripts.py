"""Find a kernel's benchmark scripts and import them (upstream layout: ``benchmarks/
benchmark*.py`` at the kernel repository's root)."""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from kernelkit.bench.contract import benchmark_classes, kernels_benchmark_shim
from kernelkit.errors import BenchmarkNotFoundError, BenchmarkScriptError

SCRIPT_GLOB = "benchmark*.py"


@dataclass(frozen=True)
class Script:
    """One imported script: its path (shown as ``name`` relative to the repository), the
    sha256 of its bytes and the benchmark classes it defines."""

    path: Path
    name: str
    sha256: str
    classes: tuple[type, ...]


def find_scripts(benchmarks_dir: Path, *, what: str) -> list[Path]:
    """``benchmarks_dir/benchmark*.py``, sorted; ``what`` names the kernel in the error."""
    scripts = sorted(p for p in benchmarks_dir.glob(SCRIPT_GLOB) if p.is_file()) \
        if benchmarks_dir.is_dir() else []
    if not scripts:
        raise BenchmarkNotFoundError(
            f"{what} has no benchmark scripts ({benchmarks_dir}/{SCRIPT_GLOB})",
            hint="add a script benchmarks/benchmark_<name>.py with a Benchmark subclass "
                 "(see docs/benchmark.md; `kernelkit init` projects ship one)")
    return scripts


_counter = iter(range(1, 1 << 62))


def load_script(path: Path, *, root: Path) -> Script:
    """Import ``path`` under a unique module name, with ``root`` (the repository) as the
    working directory while it runs, as upstream does."""
    data = path.read_bytes()
    name = f"_kernelkit_benchmark_{next(_counter)}_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:  # pragma: no cover - only for non-.py paths
        raise BenchmarkScriptError(f"cannot import {path}", script=path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        with kernels_benchmark_shim(), _cwd(root):
            spec.loader.exec_module(module)
    except Exception as exc:
        sys.modules.pop(name, None)
        raise BenchmarkScriptError(
            f"{path}: importing the benchmark script failed: {type(exc).__name__}: {exc}",
            script=path, hint="fix the script (run it with `python` to see the traceback)",
        ) from exc
    classes = benchmark_classes(module)
    if not classes:
        raise BenchmarkScriptError(
            f"{path}: defines no benchmark class",
            script=path, hint="define a class deriving from Benchmark (`from kernels.benchmark "
                              "import Benchmark`) with benchmark_<case> methods")
    return Script(path, _relative(path, root), hashlib.sha256(data).hexdigest(), tuple(classes))


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.name


@contextlib.contextmanager
def _cwd(path: Path) -> Iterator[None]:
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)
