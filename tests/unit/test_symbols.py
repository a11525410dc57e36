"""symbols.json: written by every build from the package source, validated when read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kernelkit.artifact.symbols import Layer, Symbols, package_symbols, parse_symbols
from kernelkit.errors import SymbolsError
from tests.helpers import make_variant, upstream_examples_dir

UPSTREAM = upstream_examples_dir()


def _reader(files: dict[str, str]):  # type: ignore[no-untyped-def]
    return files.get


def test_functions_follow_all_and_skip_modules_classes_and_constants() -> None:
    init = '''
import torch
from ._ops import ops
from . import layers
from .op import fused as fused_op, _private
EASTER_EGG = _read()
relu_jax = make_jax_op("relu")
VERSION = "1"
class Helper: ...
def relu(x): return x
def _hidden(x): return x
__all__ = ["relu", "layers", "EASTER_EGG", "relu_jax", "fused_op", "Helper", "VERSION"]
'''
    s = package_symbols(_reader({"__init__.py": init, "layers.py": "", "op.py": ""}))
    assert s.functions == ("fused_op", "relu", "relu_jax")
    # without __all__: public defs and imports from the package's own modules (not _ops)
    s = package_symbols(_reader({"__init__.py": init.split("__all__")[0], "op.py": ""}))
    assert s.functions == ("fused_op", "relu")


def test_layers_and_their_literal_attributes() -> None:
    layers = '''
import torch.nn as nn
from .fast import FastLayer
class ReLU(nn.Module):
    has_backward = False
    can_torch_compile: bool = True
    def forward(self, x): return x
class Computed(nn.Module):
    can_torch_compile = CAN_COMPILE
class _Private(nn.Module): ...
'''
    fast = "class FastLayer:\n    has_backward = True\n"
    s = package_symbols(_reader({"__init__.py": "", "layers/__init__.py": layers,
                                 "layers/fast.py": fast}))
    assert s.layers == (
        Layer("Computed", {"has_backward": None, "can_torch_compile": None}),
        Layer("FastLayer", {"has_backward": True, "can_torch_compile": None}),
        Layer("ReLU", {"has_backward": False, "can_torch_compile": True}),
    )
    s = package_symbols(_reader({"__init__.py": "", "layers.py": layers + "__all__ = ['ReLU']"}))
    assert [la.name for la in s.layers] == ["ReLU"]


def test_unparsable_source_gives_no_symbols_not_a_crash() -> None:
    assert package_symbols(_reader({"__init__.py": "def (:"})) == Symbols((), ())


@pytest.mark.skipif(UPSTREAM is None, reason="needs shared/upstream-examples next to the "
                    "checkout (or $KERNELKIT_UPSTREAM_EXAMPLES)")
def test_upstream_examples() -> None:
    from kernelkit.artifact.symbols import directory_reader

    assert UPSTREAM is not None

    def of(example: str) -> Symbols:
        [pkg] = [p for p in (UPSTREAM / example / "torch-ext").iterdir() if p.is_dir()]
        return package_symbols(directory_reader(pkg))

    assert of("relu") == Symbols(("relu",), (Layer("ReLU", {"has_backward": None,
                                                             "can_torch_compile": None}),))
    silu = of("silu-and-mul")
    assert silu.functions == ("silu_and_mul",)
    assert silu.layers[0].attributes["can_torch_compile"] is True
    assert of("relu-tpu").functions == ("relu",)  # relu = jax_op(...)
    assert of("extra-data").functions == ("relu",)  # not the EASTER_EGG constant


def test_every_build_writes_symbols_inside_the_digest(tmp_path: Path) -> None:
    from kernelkit.artifact.metadata import Metadata

    vdir = make_variant(tmp_path, "torch-cpu")
    data = json.loads((vdir / "symbols.json").read_text())
    assert data == {"schema_version": 1, "functions": [{"name": "scale"}], "layers": []}
    digest = Metadata.read(vdir / "metadata.json").digest
    assert digest is not None and "symbols.json" in digest.files


@pytest.mark.parametrize(("raw", "problem"), [
    ("{", "not valid JSON"),
    ('{"schema_version": 2, "functions": [], "layers": []}', "expected schema_version 1"),
    ('{"schema_version": 1, "functions": [{"nam": "f"}], "layers": []}',
     "functions must be a list of named symbols"),
    (('{"schema_version": 1, "functions": [], "layers": [{"name": "L", "attributes": '
      '{"has_backward": "yes"}}]}'), "layer 'L': attributes must be booleans or null"),
])
def test_invalid_symbols_name_the_file_and_problem(raw: str, problem: str) -> None:
    with pytest.raises(SymbolsError, match=problem) as info:
        parse_symbols(raw, "build/x/symbols.json")
    assert str(info.value).startswith("build/x/symbols.json: invalid symbols.json: ")
    assert "kernelkit build" in str(info.value)
