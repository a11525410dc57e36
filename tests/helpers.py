"""Helpers shared by tests: synthetic (pure-Python) variant trees that load fast.

A synthetic variant is a real build-tree layout (package files + sealed ``metadata.json``) whose
``__init__.py`` registers a torch op under the variant's unique namespace with
``torch.library`` instead of a compiled ``.so``; hub and loader tests use it so they do not
need a compile. End-to-end tests use really compiled kernels (see ``conftest.py``).
"""

from __future__ import annotations

from pathlib import Path

from kernelkit.artifact.layout import seal_variant
from kernelkit.artifact.metadata import Metadata

INIT_TEMPLATE = '''\
import torch

from ._ops import ops, add_op_namespace_prefix

VERSION_TAG = {tag!r}

_lib = torch.library.Library({ns!r}, "DEF")
_lib.define("scale(Tensor x) -> Tensor")
_lib.impl("scale", lambda x: x * {factor}, "CompositeExplicitAutograd")


def scale(x):
    return ops.scale(x)


__all__ = ["scale", "VERSION_TAG"]
'''

OPS_TEMPLATE = '''\
import torch

ops = getattr(torch.ops, {ns!r})


def add_op_namespace_prefix(op_name: str) -> str:
    return {ns!r} + "::" + op_name
'''


def make_variant(
    build_dir: Path,
    variant: str,
    *,
    name: str = "demo",
    version: int = 1,
    uid: str = "abc1234",
    factor: float = 2.0,
    tag: str = "v1",
    backend: str | None = None,
) -> Path:
    """Write ``build_dir/variant`` with a sealed metadata.json; return the variant dir."""
    backend = backend or ("cuda" if "-cu" in variant or variant == "torch-cuda" else "cpu")
    ns = f"_{name.replace('-', '_')}_{backend}_{uid}"
    vdir = build_dir / variant
    vdir.mkdir(parents=True, exist_ok=True)
    (vdir / "__init__.py").write_text(INIT_TEMPLATE.format(ns=ns, factor=factor, tag=tag))
    (vdir / "_ops.py").write_text(OPS_TEMPLATE.format(ns=ns))
    meta = Metadata(name=name, id=ns, version=version, license="Apache-2.0", backend=backend)
    seal_variant(vdir, meta)
    return vdir


def loaded_id(module: object) -> str:
    """``metadata.id`` of a module loaded by kernelkit (module names no longer carry it)."""
    from kernelkit import get_loaded_kernels

    return next(lk.metadata.id for lk in get_loaded_kernels() if lk.module is module)


# --- kernelkit benchmark: a project around a synthetic variant ----------------------------------

SCALE_BENCHMARK = '''\
"""Benchmarks of the synthetic `scale` kernel (x * factor): upstream's contract."""
import os
from pathlib import Path

import torch
from kernels.benchmark import Benchmark


def _count(case):
    log = os.environ.get("BENCH_CALLS_LOG")
    if log:
        with Path(log).open("a") as f:
            f.write(case + "\\n")


class ScaleBenchmark(Benchmark):
    seed = 0

    def setup(self):
        self.x = torch.randn(64, 64, device=self.device)

    def benchmark_scale(self):
        _count("scale")
        self.out = self.kernel.scale(self.x)

    def verify_scale(self):
        return self.x * 2

    def bytes_scale(self):
        return 2 * self.x.numel() * self.x.element_size()

    def flops_scale(self):
        return self.x.numel()

    def benchmark_unchecked(self):
        _count("unchecked")
        self.out = self.kernel.scale(self.x)
'''


def make_bench_project(root: Path, *, factor: float = 2.0, uid: str = "abc1234",
                       repo_id: str = "acme/scale", script: str = SCALE_BENCHMARK) -> Path:
    """A kernel project ``root``: build.toml with a hub repo id, one synthetic CPU variant
    (``scale(x) = x * factor``; the benchmark expects factor 2) and ``benchmarks/``."""
    name = repo_id.split("/")[1]
    root.mkdir(parents=True, exist_ok=True)
    (root / "build.toml").write_text(
        f'[general]\nname = "{name}"\nversion = 1\n\n[general.hub]\nrepo-id = "{repo_id}"\n')
    make_variant(root / "build", "torch-cpu", name=name, uid=uid, factor=factor)
    (root / "benchmarks").mkdir(exist_ok=True)
    (root / "benchmarks" / "benchmark_scale.py").write_text(script)
    return root
