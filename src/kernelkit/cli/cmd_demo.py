"""``kernelkit demo``: the main job, end to end, with timings (see ``kernelkit.demo``)."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from kernelkit.util.paths import default_cache_dir, default_hub_dir


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "demo",
        help="init -> build -> check -> upload -> get_kernel -> run img2gray on a photograph",
    )
    p.add_argument("--workdir", type=Path, default=Path("demo-output"), metavar="DIR",
                   help="where the example project and the output PNG go (default: ./demo-output)")
    p.add_argument("--hub", type=Path, default=None, metavar="HUB",
                   help="local hub directory (default: KERNELKIT_HUB_DIR or the user cache)")
    p.add_argument("--cache", type=Path, default=None, metavar="DIR",
                   help="loader cache (default: KERNELKIT_CACHE or the user cache)")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from kernelkit.demo import run_demo

    workdir = args.workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    hub = (args.hub or default_hub_dir()).resolve()
    cache = (args.cache or default_cache_dir()).resolve()
    t0 = time.perf_counter()
    report = run_demo(
        workdir, hub_dir=hub, cache_dir=cache,
        on_step=lambda s: print(f"[{s.seconds:7.2f} s] {s.name:<10} {s.detail}", flush=True),
    )
    total = time.perf_counter() - t0
    print(f"[{total:7.2f} s] total      grayscale photograph: {report.output_png}")
    return 0
