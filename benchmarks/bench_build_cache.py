"""Build times of a scaffolded example, one process, side by side:

* kernelkit ``build`` cold (empty compiler, probe, configure and compiler-identification
  caches, no CMake tree),
* kernelkit cold on a machine where kernelkit has built before ("known toolchain"): the same
  empty caches, but the compiler identification of the (untimed) warm-up build is kept,
* kernelkit warm-cache (``build/`` and ``_cmake_build/`` deleted, the caches kept: what a clean
  rebuild on the same machine costs),
* kernelkit in another checkout (a copy of the project elsewhere, the caches kept: configures
  afresh, with the compilers as identified before, and every compile hits),
* kernelkit no-op (everything in place: ninja has nothing to do),
* kernelkit cold again without the compiler cache (``KERNELKIT_CCACHE=0``): the compile
  schedule alone, without what ccache costs on a miss,
* ``torch.utils.cpp_extension.load`` of the same sources, cold and no-op (its own build dir).

Usage: ``python benchmarks/bench_build_cache.py [--backend cpu|cuda] [--template img2gray]
[--repeat N] [--umbrella-header] [--cold-only] [--out FILE] [--log-dir DIR]``;
``--cold-only`` times the cold builds alone (no warm-cache, other-checkout, no-op or
without-cache builds: the turns of a heavy unit then fit one GPU command); ``--umbrella-header``
adds ``#include <ATen/ATen.h>`` at the top of the template's kernel files, as the templates had
it before they took only the headers they use, and as most kernels in the field have it (nine of
the upstream examples' thirteen ``.cu`` files include ``<torch/all.h>``, all but the tvm-ffi and
stable-ABI ones): a unit whose per-architecture front end is heavy, which is where a parallel
build gains most. With ``--log-dir`` each kernelkit run's ``-v`` log (every external command
with its duration) is kept there. CUDA builds use the toolkit's full capability list unless
``KERNELKIT_CUDA_CAPABILITIES`` is set; cpp_extension gets the same list through
``TORCH_CUDA_ARCH_LIST``. ``--repeat N`` times both cold builds N times, taking turns
(kernelkit, cpp_extension, kernelkit, ...; each kernelkit run with empty caches of its own, each
cpp_extension run in a new build directory), and reports every sample and the median; the ratios
are of medians. The warm-cache, other-checkout and no-op builds use the first cold run's caches.

Before anything is timed, every file the compiles read (headers, torch's libraries, the
compilers' own programs) is read once, and a copy of the project is built once (untimed, with
caches of its own), so that neither cold build pays for first reads from disk (whichever ran
first would, and the cold kernelkit build runs first).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from results_io import write_json, write_results  # benchmarks/, this script's folder

HERE = Path(__file__).resolve().parent

CPP_EXTENSION = r"""
import json, sys, time
from pathlib import Path
from torch.utils.cpp_extension import load
spec = json.loads(Path(sys.argv[1]).read_text())
t = time.monotonic()
load(name=spec["name"], build_directory=spec["build_dir"], is_python_module=False,
     sources=spec["sources"], extra_include_paths=spec["includes"],
     extra_cflags=spec["cflags"], extra_cuda_cflags=spec["cuda_cflags"], verbose=False)
print(time.monotonic() - t)
"""


def timed(cmd: list[str], env: dict[str, str], cwd: Path | None = None,
          log: Path | None = None) -> float:
    started = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd)
    elapsed = round(time.monotonic() - started, 2)
    if log is not None:
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(f"$ {' '.join(cmd)}\n[{elapsed} s]\n{proc.stdout}\n{proc.stderr}")
    if proc.returncode != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return elapsed


def warm_page_cache(backend: str) -> int:
    """Read once every file both builds read (headers, torch's libraries for the link, the
    compilers' own programs: nvcc's cicc and cudafe++, GCC's cc1plus); return the bytes read."""
    import sysconfig

    import torch

    torch_dir = Path(torch.__file__).parent
    roots = [torch_dir / "include", torch_dir / "lib", Path(sysconfig.get_paths()["include"])]
    cc1plus = subprocess.run(["c++", "-print-prog-name=cc1plus"], capture_output=True,
                             text=True).stdout.strip()
    if cc1plus and Path(cc1plus).is_file():
        roots.append(Path(cc1plus).parent)
    if backend == "cuda":
        from kernelkit.builder.toolchain.toolkit import find_cuda_toolkit

        toolkit = find_cuda_toolkit(os.environ)
        if toolkit is not None:
            roots += [toolkit.root / "include", toolkit.root / "bin", toolkit.root / "nvvm",
                      *sorted((toolkit.root / "targets").glob("*/include"))]
    total = 0
    for root in roots:
        for path in root.rglob("*"):
            if path.is_file():
                total += len(path.read_bytes())
    return total


UMBRELLA = "#include <ATen/ATen.h>  // --umbrella-header\n"


def scaffold(dest: Path, template: str, backend: str, umbrella: bool = False) -> Path:
    from kernelkit.scaffold import init_project

    project = dest / template
    init_project(project, name=f"bench/{template}", template=template, backends=[backend])
    if umbrella:
        kernels = [f for f in project.rglob("*") if f.suffix in (".cu", ".cpp")
                   and f.parent.name.endswith(f"_{backend}")]
        assert kernels, f"no {backend} kernel file in {project}"
        for kernel in kernels:
            kernel.write_text(UMBRELLA + kernel.read_text())
    git = ["git", "-C", str(project), "-c", "user.name=b", "-c", "user.email=b@b.invalid"]
    subprocess.run([*git, "add", "-A"], check=True, capture_output=True)
    subprocess.run([*git, "commit", "-qm", "bench"], check=True, capture_output=True)
    return project


def kernelkit_cmd(project: Path, backend: str, verbose: bool) -> list[str]:
    return [sys.executable, "-m", "kernelkit", *(["-v"] if verbose else []), "build",
            str(project), "--backend", backend, "--json"]


def caches(root: Path) -> dict[str, str]:
    """Empty caches of kernelkit's own under ``root``."""
    return {"KERNELKIT_CCACHE_DIR": str(root / "ccache"),
            "KERNELKIT_PROBE_CACHE": str(root / "probe"),
            "KERNELKIT_CONFIGURE_CACHE": str(root / "configure")}


def bench_kernelkit_rebuilds(project: Path, backend: str, env: dict[str, str],
                             log: Callable[[str], Path | None],
                             verbose: bool) -> dict[str, float]:
    """After a cold build of ``project`` with ``env``'s caches: the clean rebuild, the build in
    another checkout, the no-op, and a cold build without the compiler cache."""
    cmd = kernelkit_cmd(project, backend, verbose)
    shutil.rmtree(project / "build")
    shutil.rmtree(project / "_cmake_build")
    warm = timed(cmd, env, log=log("warm_cache"))
    noop = timed(cmd, env, log=log("noop"))
    other = project.parent.parent / "other-checkout" / project.name
    shutil.copytree(project, other, ignore=shutil.ignore_patterns("build", "_cmake_build"))
    other_checkout = timed(kernelkit_cmd(other, backend, verbose), env,
                           log=log("other_checkout"))
    shutil.rmtree(project / "build")
    shutil.rmtree(project / "_cmake_build")
    bare = {**env, "KERNELKIT_CCACHE": "0",
            "KERNELKIT_CONFIGURE_CACHE": env["KERNELKIT_CONFIGURE_CACHE"] + "-bare"}
    no_cache = timed(cmd, bare, log=log("cold_without_compiler_cache"))
    return {"warm_cache_s": warm, "other_checkout_s": other_checkout, "noop_s": noop,
            "cold_without_compiler_cache_s": no_cache}


def cpp_extension_spec(project: Path, backend: str, work: Path) -> dict[str, object]:
    from kernelkit.generate import build_files
    from kernelkit.manifest import load_manifest

    manifest = load_manifest(project)
    gen = work / "gen"
    gen.mkdir(parents=True, exist_ok=True)
    registration = build_files(manifest, "bench00")["torch-ext/registration.h"]
    (gen / "registration.h").write_text(registration)
    fw = manifest.framework
    sources = [str(project / s) for s in getattr(fw, "src", ()) if s.endswith((".cpp", ".cu"))]
    includes = [str(project / "torch-ext"), str(gen)]
    for k in manifest.kernels_for(backend):
        sources += [str(project / s) for s in k.src if s.endswith((".cpp", ".cu"))]
        includes += sorted({str((project / s).parent) for s in k.src})
    name = f"bench_{manifest.general.python_name}"
    define = "-DCUDA_KERNEL" if backend == "cuda" else "-DCPU_KERNEL"
    return {"name": name, "build_dir": str(work / "build"), "sources": sources,
            "includes": includes, "cflags": ["-O3", define, f"-DTORCH_EXTENSION_NAME={name}"],
            "cuda_cflags": ["-O3", define, f"-DTORCH_EXTENSION_NAME={name}"]}


def cpp_extension_cmd(project: Path, backend: str, work: Path) -> list[str]:
    """A cpp_extension build of ``project``'s sources in ``work/build`` (new: a cold build)."""
    spec_file = work / "spec.json"
    (work / "build").mkdir(parents=True)
    spec_file.write_text(json.dumps(cpp_extension_spec(project, backend, work)))
    script = work / "plain.py"
    script.write_text(CPP_EXTENSION)
    return [sys.executable, str(script), str(spec_file)]


def arch_list(env: dict[str, str]) -> list[str]:
    from kernelkit.builder.toolchain.toolkit import find_cuda_toolkit
    from kernelkit.variants.matrix import default_cuda_capabilities

    given = env.get("KERNELKIT_CUDA_CAPABILITIES", "").strip()
    if given:
        return [c.strip() for c in given.split(",") if c.strip()]
    toolkit = find_cuda_toolkit(env)
    assert toolkit is not None, "no CUDA toolkit"
    return default_cuda_capabilities(toolkit.version)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--template", default="img2gray")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--log-dir", type=Path, default=None)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--umbrella-header", action="store_true")
    parser.add_argument("--cold-only", action="store_true")
    opts = parser.parse_args()
    out = opts.out or HERE / "results" / f"build_cache_{opts.backend}.json"
    env = {**os.environ}
    results: dict[str, object] = {
        "machine": {"cores": os.cpu_count(), "python": platform.python_version(),
                    "platform": platform.platform()},
        "template": opts.template, "backend": opts.backend,
        "kernel_headers": "umbrella (<ATen/ATen.h>)" if opts.umbrella_header else "template's"}
    with tempfile.TemporaryDirectory(prefix="kk-bench-cache-") as tmp:
        work = Path(tmp)
        results["page_cache_warmed_bytes"] = warm_page_cache(opts.backend)
        env["TORCH_EXTENSIONS_DIR"] = str(work / "torch-extensions")
        if opts.backend == "cuda":
            archs = arch_list(env)
            results["cuda_capabilities"] = archs
            env["TORCH_CUDA_ARCH_LIST"] = ";".join(archs)
        project = scaffold(work / "kk", opts.template, opts.backend, opts.umbrella_header)
        # An untimed build of a copy, with caches of its own (the timed ones stay empty): both
        # timed cold builds then find the files every build reads (system and torch headers,
        # the compilers, kernelkit's bytecode) already read once, whichever runs first.
        warmup = work / "warmup" / opts.template
        shutil.copytree(project, warmup)
        results["warmup_build_s"] = timed(
            kernelkit_cmd(warmup, opts.backend, False),
            {**env, **caches(work / "warmup-caches"), "KERNELKIT_CCACHE": "0"})
        verbose = opts.log_dir is not None  # -v when the logs are kept

        def log(name: str) -> Path | None:
            return (opts.log_dir / f"kernelkit_{opts.backend}_{name}.log"
                    if opts.log_dir else None)

        from kernelkit.builder.caches.configure_cache import ID_DIR

        known_ids = work / "warmup-caches" / "configure" / ID_DIR
        colds: list[float] = []
        colds_known: list[float] = []
        plains: list[float] = []
        plain_cmds: list[list[str]] = []
        for i in range(max(1, opts.repeat)):  # taking turns: drift of the machine hits all
            run_dir = work / f"run{i}"
            shutil.copytree(project, run_dir / "kk" / opts.template)
            colds.append(timed(kernelkit_cmd(run_dir / "kk" / opts.template, opts.backend,
                                             verbose),
                               {**env, **caches(run_dir)}, log=log(f"cold{i}")))
            # the same, on a machine where kernelkit has built before: only the compiler
            # identification (toolchain facts, no project's) is known, from the warm-up build
            known = work / f"known{i}"
            shutil.copytree(project, known / "kk" / opts.template)
            shutil.copytree(known_ids, known / "configure" / ID_DIR)
            colds_known.append(timed(kernelkit_cmd(known / "kk" / opts.template, opts.backend,
                                                   verbose),
                                     {**env, **caches(known)}, log=log(f"cold_known{i}")))
            plain_cmds.append(cpp_extension_cmd(project, opts.backend, run_dir / "plain"))
            plains.append(timed(plain_cmds[-1], env))
            write_json(out, {**results,  # kept if a time limit cuts the run
                             "partial": {"kernelkit_cold_s": colds,
                                         "kernelkit_cold_known_toolchain_s": colds_known,
                                         "cpp_extension_cold_s": plains}})
        rebuilds: dict[str, float] = {}
        plain_noop: dict[str, float] = {}
        if not opts.cold_only:
            first = work / "run0"
            rebuilds = bench_kernelkit_rebuilds(first / "kk" / opts.template, opts.backend,
                                                {**env, **caches(first)}, log, verbose)
            # the first cold build's directory, again
            plain_noop = {"noop_s": timed(plain_cmds[0], env)}
    cold, plain_cold = round(statistics.median(colds), 2), round(statistics.median(plains), 2)
    cold_known = round(statistics.median(colds_known), 2)
    results["kernelkit"] = {"cold_s": cold, "cold_samples_s": colds,
                            "cold_known_toolchain_s": cold_known,
                            "cold_known_toolchain_samples_s": colds_known, **rebuilds}
    results["cpp_extension"] = {"cold_s": plain_cold, "cold_samples_s": plains, **plain_noop}
    ratios = {
        "kernelkit_cold_over_cpp_extension_cold": round(cold / plain_cold, 3),
        "kernelkit_cold_over_cpp_extension_cold_per_turn": [
            round(k / c, 3) for k, c in zip(colds, plains, strict=True)],
        "kernelkit_cold_known_toolchain_over_cpp_extension_cold": round(
            cold_known / plain_cold, 3),
        "kernelkit_cold_known_toolchain_over_cpp_extension_cold_per_turn": [
            round(k / c, 3) for k, c in zip(colds_known, plains, strict=True)],
    }
    if rebuilds:  # not with --cold-only
        ratios |= {
            "warm_cache_over_cold": round(rebuilds["warm_cache_s"] / cold, 3),
            "other_checkout_over_cold": round(rebuilds["other_checkout_s"] / cold, 3),
            "noop_over_cold": round(rebuilds["noop_s"] / cold, 3),
            "kernelkit_cold_without_compiler_cache_over_cpp_extension_cold": round(
                rebuilds["cold_without_compiler_cache_s"] / plain_cold, 3),
        }
    results["ratios"] = ratios
    return write_results(results, out)


if __name__ == "__main__":
    sys.exit(main())
