"""Helpers shared by tests: synthetic (pure-Python) variant trees that load fast.

A synthetic variant is a real build-tree layout (package files + sealed ``metadata.json``) whose
``__init__.py`` registers a torch op under the variant's unique namespace with
``torch.library`` instead of a compiled ``.so``; hub and loader tests use it so they do not
need a compile. End-to-end tests use really compiled kernels (see ``conftest.py``).
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

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
    init_extra: str = "",
    sealed: bool = True,
    **metadata: Any,
) -> Path:
    """Write ``build_dir/variant`` with a sealed metadata.json; return the variant dir.

    ``metadata``: more ``Metadata`` fields (``archs``, ``kernels_minver``, ``kernel_depends``);
    ``init_extra``: code appended to ``__init__.py``; ``sealed=False``: no digest."""
    backend = backend or ("cuda" if "-cu" in variant or variant == "torch-cuda" else "cpu")
    ns = f"_{name.replace('-', '_')}_{backend}_{uid}"
    vdir = build_dir / variant
    vdir.mkdir(parents=True, exist_ok=True)
    (vdir / "__init__.py").write_text(INIT_TEMPLATE.format(ns=ns, factor=factor, tag=tag)
                                      + init_extra)
    (vdir / "_ops.py").write_text(OPS_TEMPLATE.format(ns=ns))
    meta = Metadata(name=name, id=ns, version=version, license="Apache-2.0", backend=backend,
                    **metadata)
    if sealed:
        seal_variant(vdir, meta)
    else:
        meta.write(vdir / "metadata.json")
    return vdir


def loaded_id(module: object) -> str:
    """``metadata.id`` of a module loaded by kernelkit (module names no longer carry it)."""
    from kernelkit import get_loaded_kernels

    return next(lk.metadata.id for lk in get_loaded_kernels() if lk.module is module)


def plant_bytecode(source: Path, code: str) -> Path:
    """Write ``__pycache__/<name>.<tag>.pyc`` for ``source`` holding ``code`` instead, with the
    header Python checks (the source's mtime and size), so a plain import would run it."""
    import importlib.util
    import marshal

    st = source.stat()
    header = (importlib.util.MAGIC_NUMBER + (0).to_bytes(4, "little")
              + (int(st.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little")
              + (st.st_size & 0xFFFFFFFF).to_bytes(4, "little"))
    pyc = Path(importlib.util.cache_from_source(str(source)))
    pyc.parent.mkdir(exist_ok=True)
    pyc.write_bytes(header + marshal.dumps(compile(code, str(source), "exec")))
    return pyc


def to_zip_layout(variant_dir: Path) -> Path:
    """Rewrite a sealed variant in place into kernels 0.19's ``zip`` build layout: the Python
    package moves into ``<metadata id>.zip`` (``__init__.py`` at its root), compiled
    extensions and data outside Python stay beside it, ``metadata.json`` says
    ``"build-layout": "zip"``, and the variant is sealed again (digest, symbols.json)."""
    import dataclasses
    import zipfile

    meta = Metadata.read(variant_dir / "metadata.json")
    archive = variant_dir / f"{meta.id}.zip"
    package = sorted(p for p in variant_dir.rglob("*.py") if "__pycache__" not in p.parts)
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in package:
            info = zipfile.ZipInfo(path.relative_to(variant_dir).as_posix(), (1980, 1, 1, 0, 0, 0))
            zf.writestr(info, path.read_bytes(), zipfile.ZIP_DEFLATED)
    for path in package:
        path.unlink()
    (variant_dir / "symbols.json").unlink(missing_ok=True)
    seal_variant(variant_dir, dataclasses.replace(meta, build_layout="zip", digest=None))
    return variant_dir



def build_files(build: Path, prefix: str = "build") -> dict[str, Path]:
    """Every file under BUILD (a ``build/`` directory, or one variant's directory with
    ``prefix="build/<variant>"``), keyed by its path in a hub repository: what
    ``Hub.publish`` takes."""
    return {f"{prefix}/{p.relative_to(build).as_posix()}": p
            for p in sorted(build.rglob("*")) if p.is_file()}


def publish_build(hub: Any, repo_id: str, branch: str, build: Path) -> str:
    """Publish BUILD as the repository's whole ``build/`` tree on BRANCH (older variants
    removed, as ``kernelkit upload`` does); returns the commit."""
    return str(hub.publish(repo_id, branch, build_files(build), delete_prefixes=("build/",)))


def git(cwd: Path, *args: str) -> str:
    """``git ARGS`` in CWD as a test author (name and e-mail set); stdout, stripped."""
    return subprocess.run(["git", "-c", "user.email=t@e", "-c", "user.name=t", *args], cwd=cwd,
                          check=True, capture_output=True, text=True).stdout.strip()


def hub_git(hub: Any, repo_id: str, *args: str) -> str:
    """``git ARGS`` in a local hub's bare repository of REPO_ID; stdout, stripped."""
    return subprocess.run(["git", f"--git-dir={hub.repo_path(repo_id)}", *args], check=True,
                          capture_output=True, text=True).stdout.strip()

def upstream_examples_dir() -> Path | None:
    """Upstream's example projects (``shared/upstream-examples`` next to the checkout or above
    it, or ``$KERNELKIT_UPSTREAM_EXAMPLES``); ``None`` when absent."""
    import os

    env = os.environ.get("KERNELKIT_UPSTREAM_EXAMPLES")
    root = Path(__file__).resolve().parents[1]
    candidates = [Path(env)] if env else [p / "shared" / "upstream-examples"
                                          for p in (root, *root.parents)]
    return next((c for c in candidates if c.is_dir()), None)


UPSTREAM_EXAMPLES_MISSING = ("needs upstream's example projects: shared/upstream-examples next "
                             "to the checkout (or above it), or $KERNELKIT_UPSTREAM_EXAMPLES")


def upstream_example(name: str, dest: Path | None = None) -> Path:
    """Upstream example NAME (skips the test, with one message, when the corpus is absent);
    copied to DEST when given, so the test can change or build it."""
    import shutil

    import pytest

    root = upstream_examples_dir()
    if root is None or not (root / name / "build.toml").is_file():
        pytest.skip(f"{UPSTREAM_EXAMPLES_MISSING} (example {name})")
    if dest is None:
        return root / name
    shutil.copytree(root / name, dest)
    return dest


LAYERS_INIT = '''\
import torch

from . import layers
from ._ops import ops, add_op_namespace_prefix

CALLS = layers.CALLS


def silu_and_mul(x: torch.Tensor) -> torch.Tensor:
    CALLS.append(("silu_and_mul", tuple(x.shape)))
    d = x.shape[-1] // 2
    return torch.nn.functional.silu(x[..., :d]) * x[..., d:]
'''

LAYERS_MODULE = '''\
import torch
from torch import nn

CALLS = []


def _silu_and_mul(name, x):
    CALLS.append((name, tuple(x.shape)))
    d = x.shape[-1] // 2
    return torch.nn.functional.silu(x[..., :d]) * x[..., d:]


class SiluAndMul(nn.Module):
    can_torch_compile = True
    has_backward = True

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _silu_and_mul("SiluAndMul", x)


class NoBackward(nn.Module):
    can_torch_compile = True
    has_backward = False

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _silu_and_mul("NoBackward", x)


class NoCompile(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _silu_and_mul("NoCompile", x)
'''


def make_layers_variant(build_dir: Path, variant: str, *, name: str = "act-layers",
                        uid: str = "abc1234") -> Path:
    """A pure-Python kernel with a ``layers`` module (``SiluAndMul`` with backward and
    torch.compile support, ``NoBackward``, ``NoCompile``) and a function ``silu_and_mul``;
    every call is appended to the kernel's ``CALLS`` list. Loads with kernelkit and upstream."""
    ns = f"_{name.replace('-', '_')}_cpu_{uid}"
    vdir = build_dir / variant
    vdir.mkdir(parents=True, exist_ok=True)
    (vdir / "__init__.py").write_text(LAYERS_INIT)
    (vdir / "layers.py").write_text(LAYERS_MODULE)
    (vdir / "_ops.py").write_text(OPS_TEMPLATE.format(ns=ns))
    seal_variant(vdir, Metadata(name=name, id=ns, version=1, license="Apache-2.0",
                                backend="cpu"))
    return vdir


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """``kernelkit ARGS`` run in this process through the real entry point
    (``kernelkit.cli.main.main``), stdout and stderr captured: a CLI test without paying an
    interpreter start and a torch import per call. Settings come from ``os.environ``."""
    import contextlib
    import io

    from kernelkit.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse's own errors
            code = int(exc.code or 0)
    return subprocess.CompletedProcess(["kernelkit", *args], code, out.getvalue(),
                                       err.getvalue())
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


# --- signed kernels: a trust policy file ----------------------------------------------------------


def write_trust_policy(path: Path, *, orgs: dict[str, list[str]] | None = None,
                       revoked: list[str] | None = None, require: bool = False,
                       sigstore: dict[str, tuple[str, list[str]]] | None = None) -> Path:
    """A trust policy file (docs/security.md, "Signatures"): ``orgs`` maps an organisation to
    key fingerprints, ``sigstore`` to ``(GitHub repository, workflow URIs)``."""
    import json

    lines = [f"require-signature = {'true' if require else 'false'}",
             f"revoked = {json.dumps(revoked or [])}"]
    for org in sorted(set(orgs or {}) | set(sigstore or {})):
        lines.append(f'[orgs."{org}"]')
        if (orgs or {}).get(org):
            lines.append(f"keys = {json.dumps(orgs[org])}")  # type: ignore[index]
        if (sigstore or {}).get(org):
            repo, flows = sigstore[org]  # type: ignore[index]
            lines += [f'[[orgs."{org}".sigstore]]', f"repository = {json.dumps(repo)}",
                      f"workflows = {json.dumps(flows)}"]
    path.write_text("\n".join(lines) + "\n")
    return path
