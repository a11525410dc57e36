"""Variant names and selection: kernelkit's ranking against kernels 0.19.1's own.

For every system of a table (CPU, CUDA versions, ROCm, XPU, CANN, Metal, stable ABI, tvm-ffi,
noarch, MLX, SDKs, free-threaded and older/newer Pythons) kernelkit ranks one list of variant
names in both grammars; kernels 0.19.1 then checks and sorts the same names, given in
kernelkit's order, with its own resolver for that system. Its sort is stable, so it hands the
order back unchanged exactly when kernelkit's order agrees with its preference: the accepted
names must come back in the same order, and the rejected ones must be the same set.

kernels 0.17.2 reads the legacy grammar only: the names ``kernelkit build`` writes
(``BUILD_NAME_GRAMMAR``) must parse there too, and a 0.19-grammar name must not be mistaken for
an arch variant by it (it is a noarch name there, which no machine selects).
"""

from __future__ import annotations

import json
from dataclasses import asdict

from kernelkit.variants.choose import rank_variants
from kernelkit.variants.host import System
from kernelkit.variants.name import BUILD_NAME_GRAMMAR, is_variant_name, to_grammar
from tests.upstream_envs import UpstreamEnv

LEGACY = [
    "torch213-cxx11-cpu-x86_64-linux",
    "torch213-cxx11-cu126-x86_64-linux",
    "torch213-cxx11-cu128-x86_64-linux",
    "torch213-cxx11-cu130-x86_64-linux",
    "torch214-cxx11-cu130-x86_64-linux",
    "torch214-cxx11-cpu-x86_64-linux",
    "torch211-cxx11-cpu-x86_64-linux",
    "torch213-cxx98-cpu-x86_64-linux",
    "torch213-cpu-x86_64-linux",
    "torch213-cxx11-cpu-aarch64-linux",
    "torch213-cxx11-rocm70-x86_64-linux",
    "torch213-cxx11-rocm72-x86_64-linux",
    "torch213-cxx11-rocm64-x86_64-linux",
    "torch213-cxx11-xpu20253-x86_64-linux",
    "torch213-cxx11-cann80-x86_64-linux",
    "torch213-metal-aarch64-darwin",
    "torch213-cpu-aarch64-darwin",
    "torch-stable-abi211-cpu-x86_64-linux",
    "torch-stable-abi29-cpu-x86_64-linux",
    "torch-stable-abi211-cu126-x86_64-linux",
    "torch-stable-abi214-cu130-x86_64-linux",
    "tvm-ffi01-cpu-x86_64-linux",
    "tvm-ffi01-cu128-x86_64-linux",
    "tvm-ffi02-cpu-x86_64-linux",
    "torch-cpu",
    "torch-cuda",
    "torch-rocm",
    "torch-xpu",
    "torch-metal",
    "torch-cann",
    "torch-npu",
    "torch-neuron",
    "torch-tpu",
    "torch-universal",
]
NEW = [
    "torch-2.13-cxx11-cpu-cpython-3.9-abi3-x86_64-linux",
    "torch-2.13-cpu-cpython-3.11-abi3-x86_64-linux",
    "torch-2.13-cpu-cpython-3.12-abi3-x86_64-linux",
    "torch-2.13-cpu-cpython-3.15-abi3t-x86_64-linux",
    "torch-2.13-cuda-12.8-cpython-3.9-abi3-x86_64-linux",
    "torch-2.13-cuda-12.9-cpython-3.10-abi3-x86_64-linux",
    "torch-2.14-cxx11-cuda-13.0-cpython-3.9-abi3-x86_64-linux",
    "torch-2.13-rocm-7.1-cpython-3.9-abi3-x86_64-linux",
    "torch-2.13-cann-8.0-cpython-3.9-abi3-x86_64-linux",
    "torch-2.13-metal-cpython-3.9-abi3-aarch64-darwin",
    "torch-stable-abi-2.11-cpu-cpython-3.9-abi3-x86_64-linux",
    "torch-stable-abi-2.12-cuda-12.6-cpython-3.9-abi3-x86_64-linux",
    "torch-stable-abi-2.10-cpu-cpython-3.15-abi3t-x86_64-linux",
    "tvm-ffi-0.1-cpu-cpython-3.9-abi3-x86_64-linux",
    "tvm-ffi-0.1-cuda-12.8-cpython-3.12-abi3-x86_64-linux",
    "mlx-metal",
    "mlx-cpu",
    "sdk",
    "sdk-cuda",
    "sdk-cpu",
    "sdk-cpython-3.12-abi3-x86_64-linux",
    "sdk-cuda-12.8-cpython-3.12-abi3-x86_64-linux",
    "sdk-cpu-cpython-3.9-abi3-x86_64-linux",
    "sdk-cpython-3.15-abi3t-x86_64-linux",
]
NAMES = LEGACY + NEW


def _sys(backend: str = "cpu", bver: tuple[int, int] | None = None, *,
         torch: tuple[int, int] | None = (2, 13), abi: bool | None = True, cpu: str = "x86_64",
         os: str = "linux", tvm: tuple[int, int] | None = None,
         macos: tuple[int, int] | None = None, python: tuple[int, int] = (3, 11),
         free_threaded: bool = False, mlx: bool = False) -> System:
    return System(torch, abi, backend, bver, cpu, os, tvm_ffi_version=tvm, macos_version=macos,
                  free_threaded=free_threaded, python_version=python, has_mlx=mlx)


SYSTEMS: dict[str, System] = {
    "cpu": _sys(),
    "cpu torch 2.11": _sys(torch=(2, 11)),
    "cpu torch 2.14 py3.12": _sys(torch=(2, 14), python=(3, 12)),
    "cpu aarch64": _sys(cpu="aarch64"),
    "cpu pre-cxx11 abi": _sys(abi=False),
    "cpu without torch": _sys(torch=None, abi=None),
    "cpu py3.9": _sys(python=(3, 9)),
    "cuda 12.6": _sys("cuda", (12, 6)),
    "cuda 12.8": _sys("cuda", (12, 8)),
    "cuda 12.9": _sys("cuda", (12, 9)),
    "cuda 13.0 torch 2.14": _sys("cuda", (13, 0), torch=(2, 14)),
    "cuda 12.8 tvm-ffi 0.1": _sys("cuda", (12, 8), tvm=(0, 1), python=(3, 12)),
    "cpu tvm-ffi 0.1": _sys(tvm=(0, 1)),
    "rocm 7.0": _sys("rocm", (7, 0)),
    "rocm 7.2": _sys("rocm", (7, 2)),
    "xpu 2025.3": _sys("xpu", (2025, 3)),
    "cann 8.0": _sys("cann", (8, 0)),
    "metal macOS 26": _sys("metal", None, abi=None, cpu="aarch64", os="darwin", macos=(26, 0)),
    "metal macOS 15": _sys("metal", None, abi=None, cpu="aarch64", os="darwin", macos=(15, 7)),
    "metal with mlx": _sys("metal", None, abi=None, cpu="aarch64", os="darwin", macos=(26, 1),
                           mlx=True),
    "cpu macOS": _sys("cpu", None, abi=None, cpu="aarch64", os="darwin", macos=(26, 1)),
    "neuron": _sys("neuron"),
    "tpu": _sys("tpu"),
    "free-threaded 3.13": _sys(python=(3, 13), free_threaded=True),
    "free-threaded 3.15": _sys(python=(3, 15), free_threaded=True),
    "GIL 3.15": _sys(python=(3, 15)),
}

# Runs in kernels 0.19.1's environment: its own parser and resolver, for explicit systems.
UPSTREAM_RANK = r"""
import json, sys
from packaging.version import Version
from kernels._internals import backends as b
from kernels._internals.variants import (VariantAccepted, _resolve_variant_for_system,
                                         parse_variant)

def backend(name, version):
    if name in ("cuda", "rocm", "xpu", "cann"):
        cls = {"cuda": b.CUDA, "rocm": b.ROCm, "xpu": b.XPU, "cann": b.CANN}[name]
        return cls(version=Version("%d.%d" % tuple(version)))
    return {"cpu": b.CPU, "metal": b.Metal, "neuron": b.Neuron, "tpu": b.TPU}[name]()

def ver(v):
    return None if v is None else Version("%d.%d" % tuple(v))

out = {}
for label, case in json.load(sys.stdin).items():
    s = case["system"]
    _, trace = _resolve_variant_for_system(
        [parse_variant(n) for n in case["names"]],
        selected_backend=backend(s["backend"], s["backend_version"]),
        cpu=s["cpu"], os=s["os"], torch_version=ver(s["torch_version"]),
        torch_cxx11_abi=s["cxx11_abi"], tvm_ffi_version=ver(s["tvm_ffi_version"]),
        macos_version=ver(s["macos_version"]), python_version=ver(s["python_version"]),
        free_threaded=s["free_threaded"], has_mlx=s["has_mlx"])
    out[label] = [[d.variant.variant_str, isinstance(d, VariantAccepted)] for d in trace]
print(json.dumps(out))
"""


def test_every_name_parses_in_both_tools(kernels_019: UpstreamEnv) -> None:
    assert all(is_variant_name(n) for n in NAMES), [n for n in NAMES if not is_variant_name(n)]
    code = ("import json, sys\nfrom kernels._internals.variants import parse_variant\n"
            "print(json.dumps([parse_variant(n).variant_str for n in json.load(sys.stdin)]))")
    proc = kernels_019.run_stdin(code, json.dumps(NAMES))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == NAMES  # upstream formats each back to the same name


def test_selection_agrees_with_kernels_0_19_on_every_system(kernels_019: UpstreamEnv) -> None:
    ours = {label: rank_variants(NAMES, system) for label, system in SYSTEMS.items()}
    request = {label: {"system": asdict(SYSTEMS[label]), "names": [d.variant for d in ranked]}
               for label, ranked in ours.items()}
    proc = kernels_019.run_stdin(UPSTREAM_RANK, json.dumps(request))
    assert proc.returncode == 0, proc.stderr
    theirs = json.loads(proc.stdout)
    for label, ranked in ours.items():
        accepted = [d.variant for d in ranked if d.accepted]
        assert [n for n, ok in theirs[label] if ok] == accepted, label
        assert {n for n, ok in theirs[label] if not ok} == {
            d.variant for d in ranked if not d.accepted}, label
    # the table is not vacuous: each system selects something, and the choices differ
    best = {label: next(d.variant for d in ranked if d.accepted) for label, ranked in ours.items()
            if ranked[0].accepted}
    assert best["cuda 13.0 torch 2.14"] == "torch-stable-abi214-cu130-x86_64-linux"
    assert best["rocm 7.0"] == "torch213-cxx11-rocm70-x86_64-linux"
    assert best["cann 8.0"] == "torch-2.13-cann-8.0-cpython-3.9-abi3-x86_64-linux"
    assert best["cpu without torch"] == "sdk-cpu-cpython-3.9-abi3-x86_64-linux"
    assert best["metal macOS 15"] == "torch-metal"
    assert best["free-threaded 3.13"] == "torch-cpu"
    assert best["free-threaded 3.15"] == "torch-stable-abi-2.10-cpu-cpython-3.15-abi3t-x86_64-linux"
    assert len(set(best.values())) >= 10


def test_build_names_are_read_by_both_releases(upstream: UpstreamEnv) -> None:
    """What ``kernelkit build`` names variants (legacy grammar) parses as the same arch
    variant in 0.17.2 and 0.19.1; the 0.19 grammar is not an arch variant to 0.17.2."""
    assert BUILD_NAME_GRAMMAR == "legacy"
    arch = [n for n in LEGACY if not n.startswith("torch-") or n.startswith("torch-stable")]
    new = [to_grammar(n, "0.19") for n in arch]
    module = ("kernels._internals.variants" if upstream.version >= "0.19"
              else "kernels.variants")
    code = (f"import json, sys\nfrom {module} import parse_variant, ArchVariant\n"
            "out = []\nfor n in json.load(sys.stdin):\n"
            "    try:\n        v = parse_variant(n)\n"
            "        out.append([v.variant_str, isinstance(v, ArchVariant)])\n"
            "    except ValueError:\n        out.append([None, False])\n"
            "print(json.dumps(out))")
    proc = upstream.run_stdin(code, json.dumps(arch + new))
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert got[:len(arch)] == [[n, True] for n in arch]
    if upstream.version >= "0.19":
        assert got[len(arch):] == [[n, True] for n in new]
    else:
        assert not any(is_arch for _, is_arch in got[len(arch):])
