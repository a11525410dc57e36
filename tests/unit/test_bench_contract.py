"""Benchmark scripts (kernelkit.bench.contract, .scripts) and output checks (.verify):
upstream's base class or kernelkit's stand-in, case discovery, clear errors for bad scripts,
and comparisons of a case's output with its reference."""

from __future__ import annotations

import importlib.abc
import sys
from pathlib import Path

import pytest
import torch

from kernelkit.bench import Benchmark
from kernelkit.bench.contract import cases_of
from kernelkit.bench.scripts import find_scripts, load_script
from kernelkit.bench.verify import compare_outputs
from kernelkit.errors import BenchmarkNotFoundError, BenchmarkScriptError

UPSTREAM_STYLE = """\
from kernels.benchmark import Benchmark


class Base(Benchmark):
    def benchmark_shared(self):
        self.out = 1


class Mine(Base):
    seed = 3

    def benchmark_b(self):
        self.out = 2

    def benchmark_a(self):
        self.out = 1
"""


class _NoUpstream(importlib.abc.MetaPathFinder):
    """This interpreter without upstream `kernels` installed (it is in the dev environment)."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name == "kernels" or name.startswith("kernels."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)


@pytest.fixture
def no_upstream(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [m for m in sys.modules if m == "kernels" or m.startswith("kernels.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(sys, "meta_path", [_NoUpstream(), *sys.meta_path])


def _script(tmp_path: Path, text: str, name: str = "benchmark_x.py") -> Path:
    (tmp_path / "benchmarks").mkdir(exist_ok=True)
    path = tmp_path / "benchmarks" / name
    path.write_text(text)
    return path


def test_upstream_script_runs_without_upstream_installed(tmp_path: Path,
                                                         no_upstream: None) -> None:
    script = load_script(_script(tmp_path, UPSTREAM_STYLE), root=tmp_path)
    assert [c.__name__ for c in script.classes] == ["Base", "Mine"]
    assert all(issubclass(c, Benchmark) for c in script.classes)
    assert "kernels" not in sys.modules and "kernels.benchmark" not in sys.modules
    assert script.name == "benchmarks/benchmark_x.py" and len(script.sha256) == 64


def test_upstream_script_gets_upstreams_class_when_installed(tmp_path: Path) -> None:
    from kernels.benchmark import Benchmark as Upstream

    script = load_script(_script(tmp_path, UPSTREAM_STYLE), root=tmp_path)
    assert all(issubclass(c, Upstream) for c in script.classes)
    mine = next(c for c in script.classes if c.__name__ == "Mine")
    assert [c.label for c in cases_of(mine)] == ["Mine.a", "Mine.b", "Mine.shared"]


def test_kernelkit_base_class_and_imported_classes_are_not_cases(tmp_path: Path) -> None:
    text = ("from kernelkit.bench import Benchmark\n"
            "from kernelkit.bench.contract import Benchmark as Again\n"
            "class Only(Benchmark):\n    def benchmark_x(self):\n        pass\n")
    script = load_script(_script(tmp_path, text), root=tmp_path)
    assert [c.__name__ for c in script.classes] == ["Only"]


def test_scripts_run_in_the_repository_directory(tmp_path: Path) -> None:
    (tmp_path / "data.txt").write_text("7")
    text = ("from pathlib import Path\nfrom kernelkit.bench import Benchmark\n"
            "N = int(Path('data.txt').read_text())\n"
            "class B(Benchmark):\n    def benchmark_x(self):\n        pass\n")
    script = load_script(_script(tmp_path, text), root=tmp_path)
    assert sys.modules[script.classes[0].__module__].N == 7  # type: ignore[attr-defined]


def test_bad_scripts_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(BenchmarkNotFoundError, match="has no benchmark scripts") as e:
        find_scripts(tmp_path / "benchmarks", what="demo")
    assert e.value.hint and "benchmark_<name>.py" in e.value.hint
    broken = _script(tmp_path, "raise RuntimeError('boom')\n", "benchmark_broken.py")
    with pytest.raises(BenchmarkScriptError, match="RuntimeError: boom") as e2:
        load_script(broken, root=tmp_path)
    assert e2.value.script == broken
    empty = _script(tmp_path, "X = 1\n", "benchmark_empty.py")
    with pytest.raises(BenchmarkScriptError, match="defines no benchmark class"):
        load_script(empty, root=tmp_path)
    assert find_scripts(tmp_path / "benchmarks", what="demo") == [broken, empty]


def test_outputs_within_tolerance_match() -> None:
    ref = torch.linspace(-3, 3, 100)
    v = compare_outputs(ref + 5e-3, ref)
    assert v.passed and v.max_abs_error == pytest.approx(5e-3, rel=1e-3)
    assert compare_outputs(ref.half(), ref).passed  # float16 kernel, float32 reference
    assert compare_outputs((ref, ref * 2), [ref, ref * 2]).passed


@pytest.mark.parametrize(
    ("out", "ref", "message"),
    [
        (None, torch.zeros(2), "out is None"),
        (torch.zeros(2, 3), torch.zeros(3, 2), "shape (2, 3), the reference (3, 2)"),
        (torch.zeros(4), torch.tensor([0.0, 0.0, 0.0, 1.0]), "1 of 4 elements differ"),
        (torch.tensor([float("nan"), 0.0]), torch.zeros(2), "1 more NaN than the reference"),
        (torch.tensor([1, 2, 3], dtype=torch.uint8), torch.tensor([1, 2, 4], dtype=torch.uint8),
         "integer results must be equal"),
        ((torch.zeros(2),), (torch.zeros(2), torch.zeros(2)), "not a sequence of 2"),
        ((torch.zeros(2), torch.ones(2)), (torch.zeros(2), torch.zeros(2)), "out[1]: 2 of 2"),
    ],
)
def test_wrong_outputs_say_what_is_wrong(out: object, ref: object, message: str) -> None:
    v = compare_outputs(out, ref)
    assert v.passed is False and message in v.detail


def test_class_tolerances_apply() -> None:
    ref = torch.ones(10)
    assert not compare_outputs(ref * 1.05, ref).passed
    assert compare_outputs(ref * 1.05, ref, rtol=0.06).passed
