"""``kernelkit benchmark [KERNEL] [--version V | --revision R]``: run the kernel's
``benchmarks/benchmark*.py`` (``kernelkit.bench``), verified, timed, against baselines."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

from kernelkit.cli.parser import add_hub, add_json, add_revision, add_version
from kernelkit.errors import ExitCode, TrustError, UsageError


def register(sub: Any) -> None:
    p = sub.add_parser(
        "benchmark", help="time the kernel's benchmarks/ scripts: verified, with statistics, "
                          "baselines and a roofline",
        description="Run the kernel's benchmarks/benchmark*.py scripts (upstream's Benchmark "
                    "contract) against the local build variant this machine would load, or a "
                    "hub version. Every case is checked against its reference before it is "
                    "timed; a wrong result is reported and not timed. Each case is timed with "
                    "the reference (eager), torch.compile of it and --compare, each with a "
                    "speedup and its 95% interval. See docs/benchmark.md.")
    p.add_argument("kernel", nargs="?", default=".", metavar="KERNEL",
                   help="a kernel project, its build/ or a variant directory (default: .), or "
                        "ORG/NAME[@REF] on the hub")
    g = p.add_mutually_exclusive_group()
    add_version(g, help="hub: a major version (1) or a specifier over release tags "
                "('>=1.1,<2')")
    add_revision(g)
    add_hub(p)
    p.add_argument("--trust-remote-code", action="store_true",
                   help="run a hub kernel (and its scripts) from a publisher not trusted")
    p.add_argument("--compare", metavar="REF", help="also time another version of the kernel: "
                   "a version (v1) or revision on the hub, or a local build directory")
    p.add_argument("--device", metavar="DEVICE",
                   help="torch device (default: the variant's: cpu, cuda, ...)")
    p.add_argument("--case", dest="cases", action="append", default=[], metavar="PATTERN",
                   help="only cases whose Class.case matches this fnmatch pattern (repeatable)")
    p.add_argument("--benchmarks", type=Path, metavar="DIR",
                   help="local: the scripts' directory (default: PROJECT/benchmarks)")
    t = p.add_argument_group("timing")
    t.add_argument("--iterations", type=int, metavar="N", help="exactly N samples per series "
                   "(default: until --min-time and 25 samples)")
    t.add_argument("--warmup", type=int, metavar="N",
                   help="exactly N warmup calls (default: until the timings are stable)")
    t.add_argument("--min-time", type=float, default=0.3, metavar="S",
                   help="measured seconds per series at least (default 0.3)")
    t.add_argument("--max-time", type=float, default=5.0, metavar="S",
                   help="seconds per series at most (default 5)")
    t.add_argument("--l2-flush", action="store_true",
                   help="CUDA: flush the L2 cache before every call (cold-cache timings)")
    t.add_argument("--cuda-graphs", choices=("auto", "on", "off"), default="auto",
                   help="CUDA: time calls under 100 us with a CUDA graph (auto, default)")
    b = p.add_argument_group("baselines")
    b.add_argument("--no-reference", action="store_true",
                   help="do not time the reference (nor torch.compile of it)")
    b.add_argument("--no-compile", action="store_true", help="do not time torch.compile")
    b.add_argument("--no-roofline", action="store_true",
                   help="do not measure this machine's bandwidth and matmul throughput")
    o = p.add_argument_group("results")
    add_json(o, "print the results as JSON on stdout (the table goes to stderr)")
    o.add_argument("--output", type=Path, metavar="FILE", help="write the results JSON to FILE")
    o.add_argument("--plot", type=Path, metavar="DIR", help="write the charts (PNG and SVG, "
                   "light and dark) to DIR (needs matplotlib: pip install 'kernelkit[plot]')")
    o.add_argument("--save", action="store_true",
                   help="local: keep the results and charts in benchmarks/results/<variant>/ "
                        "of the project, where `kernelkit upload` carries them")
    p.set_defaults(func=run)


def _options(args: argparse.Namespace, device: str) -> Any:
    from kernelkit.bench.runner import RunOptions
    from kernelkit.bench.timing import TimingOptions

    for name in ("iterations", "warmup"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise UsageError(f"--{name} must be at least 1")
    if args.min_time < 0 or args.max_time <= 0:
        raise UsageError("--min-time must be >= 0 and --max-time > 0")
    timing = TimingOptions(min_time_s=args.min_time, max_time_s=args.max_time,
                           iterations=args.iterations, warmup=args.warmup,
                           l2_flush=args.l2_flush, cuda_graphs=args.cuda_graphs)
    return RunOptions(device=device, timing=timing, reference=not args.no_reference,
                      compile=not args.no_compile, roofline=not args.no_roofline,
                      cases=tuple(args.cases))


def _hub(args: argparse.Namespace) -> Any:
    from kernelkit.cli.online import open_online_hub

    return open_online_hub(args.hub, "benchmark")


def _sources(args: argparse.Namespace, scratch: Path) -> tuple[Any, Any, Path | None]:
    """(source, compare target, project directory for --save)."""
    from kernelkit.bench.source import load_compare, load_hub, load_local, parse_request

    local = Path(args.kernel).is_dir()
    hub = None
    if local:
        if args.version or args.revision:
            raise UsageError(f"--version/--revision apply to hub kernels, not to the local "
                             f"directory {args.kernel}")
        source = load_local(Path(args.kernel), benchmarks=args.benchmarks)
    else:
        if args.save or args.benchmarks:
            raise UsageError("--save and --benchmarks apply to a local kernel project")
        repo_id, revision, version = parse_request(args.kernel)
        if repo_id.count("/") != 1 or repo_id.startswith((".", "/", "~")):
            raise UsageError(f"{args.kernel}: no such directory, and not a repository id",
                             hint="pass a kernel project directory or ORG/NAME[@REF]")
        if (revision is not None or version is not None) and (args.version or args.revision):
            raise UsageError(f"{args.kernel} names a version: drop --version/--revision")
        hub = _hub(args)
        source = load_hub(hub, repo_id, revision=revision or args.revision,
                          version=version if version is not None else args.version,
                          trust_remote_code=args.trust_remote_code, scratch=scratch)
    compare = None
    if args.compare:
        if hub is None and not Path(args.compare).is_dir():
            hub = _hub(args)
        compare = load_compare(args.compare, hub, source.target.info.repo_id,
                               trust_remote_code=args.trust_remote_code,
                               scratch=scratch / "compare")
    from kernelkit.bench.source import project_root

    return source, compare, project_root(Path(args.kernel)) if local else None


def run(args: argparse.Namespace) -> int:
    from kernelkit.bench import plot
    from kernelkit.bench.api import default_device, run_benchmark
    from kernelkit.bench.results import RESULTS_DIR, RESULTS_FILE, dumps
    from kernelkit.cli.render_bench import Progress, format_table, notes, table_rows
    from kernelkit.util.fs import atomic_write_text

    if args.plot is not None and not plot.available():  # before minutes of timing
        raise UsageError("--plot needs matplotlib, which is not installed",
                         hint="pip install 'kernelkit[plot]', or drop --plot")
    with tempfile.TemporaryDirectory(prefix="kernelkit-benchmark-") as tmp:
        try:
            source, compare, project = _sources(args, Path(tmp))
        except TrustError as exc:  # the loader's hint names the Python argument
            org = args.kernel.split("/", 1)[0]
            raise TrustError(exc.message, hint=f"if you trust it, pass --trust-remote-code, or "
                             f"add '{org}' to KERNELKIT_TRUSTED_PUBLISHERS") from None
        device = args.device or default_device(source.target.info.variant)
        result = run_benchmark(source, _options(args, device), Progress(), compare)
    text = dumps(result)
    table = sys.stderr if args.json else sys.stdout
    print("\n" + format_table(table_rows(result)), file=table)
    for line in notes(result):
        print(f"  {line}", file=table)
    written = []
    if args.output is not None:
        atomic_write_text(args.output, text)
        written.append(args.output)
    plot_dirs = [args.plot] if args.plot is not None else []
    if args.save:
        assert project is not None
        keep = project / RESULTS_DIR / result.kernel.variant
        keep.mkdir(parents=True, exist_ok=True)
        atomic_write_text(keep / RESULTS_FILE, text)
        written.append(keep / RESULTS_FILE)
        if plot.available():
            plot_dirs.append(keep)
        else:
            print("note: charts not saved: matplotlib is not installed (pip install "
                  "'kernelkit[plot]')", file=sys.stderr)
    for folder in plot_dirs:
        written += plot.write_plots(result, folder)
    for path in written:
        print(f"wrote {path}", file=sys.stderr)
    if args.json:
        sys.stdout.write(text)
    return ExitCode.ERROR if result.failed else ExitCode.OK
