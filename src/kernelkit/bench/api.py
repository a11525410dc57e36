"""``run_benchmark``: import the scripts, run the cases, measure the roofs, return the result
(a value; the CLI renders it, :mod:`kernelkit.bench.plot` draws it)."""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime, timezone

from kernelkit._version import __version__
from kernelkit.bench.hardware import machine_info
from kernelkit.bench.results import RunResult
from kernelkit.bench.runner import (
    Emit,
    RunOptions,
    Target,
    measure_roofs,
    run_cases,
    select_cases,
)
from kernelkit.bench.scripts import load_script
from kernelkit.bench.source import Source
from kernelkit.bench.stats import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, CONFIDENCE
from kernelkit.errors import UsageError
from kernelkit.variants.name import is_variant_name, parse_variant

#: variant backend -> torch device type
_DEVICES = {"cuda": "cuda", "rocm": "cuda", "xpu": "xpu", "metal": "mps", "cpu": "cpu",
            "npu": "npu", "cann": "npu"}


def default_device(variant: str) -> str:
    """The torch device a variant's kernels run on (``cpu`` for a universal kernel without a
    GPU here)."""
    backend = parse_variant(variant).backend if is_variant_name(variant) else "cpu"
    device = _DEVICES.get(backend, "cpu")
    if backend == "universal":
        import torch

        device = "cuda" if torch.cuda.is_available() else "cpu"
    return device


def check_device(device: str) -> None:
    import torch

    kind = device.split(":")[0]
    if kind == "cuda" and not torch.cuda.is_available():
        raise UsageError(f"device {device}: this torch ({torch.__version__}) sees no CUDA "
                         "device", hint="run on a machine with a GPU and a CUDA torch, or "
                                        "benchmark a CPU build (--device cpu)")


def run_benchmark(source: Source, opts: RunOptions, emit: Emit,
                  compare: Target | None = None) -> RunResult:
    check_device(opts.device)
    scripts = [load_script(p, root=source.root) for p in source.scripts]
    chosen = select_cases(scripts, opts.cases)
    cases = run_cases(chosen, source.target, compare, opts, emit)
    roofs, note = measure_roofs(cases, opts, emit)
    return RunResult(
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        kernelkit=__version__, machine=machine_info(opts.device), kernel=source.target.info,
        settings=settings_json(opts), scripts=[{"path": s.name, "sha256": s.sha256}
                                               for s in scripts],
        cases=cases, compare=None if compare is None else compare.info, hardware=roofs,
        hardware_note=note)


def settings_json(opts: RunOptions) -> dict[str, object]:
    return {"device": opts.device, "reference": opts.reference, "compile": opts.compile,
            "roofline": opts.roofline, "cases": list(opts.cases),
            "timing": asdict(opts.timing), "confidence": CONFIDENCE,
            "bootstrap": {"resamples": BOOTSTRAP_RESAMPLES, "seed": BOOTSTRAP_SEED}}
