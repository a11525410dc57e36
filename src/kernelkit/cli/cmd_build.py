"""``kernelkit build``: compile the variants of a kernel.

Without ``--all``/``--variant``: the backends that the torch of ``--python`` (default: this
interpreter) supports, built with that interpreter. With them: the supported matrix, each
variant in its own pinned environment, several at once, with the build cache. Both are one
plan run by one pipeline (``kernelkit.builder.api``); this module parses, renders and exits.

A variant that cannot be built is skipped (saying whose limitation that is) and the others are
built; the build ends with one line per variant and exits non-zero only on a real failure (or,
with ``--strict``, on any skip, or when nothing at all was built).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from kernelkit.cli import ui
from kernelkit.cli.parser import add_project
from kernelkit.errors import ExitCode, UsageError


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _shard(text: str) -> tuple[int, int]:
    index, sep, count = text.partition("/")
    if not (sep and index.isdigit() and count.isdigit() and 1 <= int(index) <= int(count)):
        raise argparse.ArgumentTypeError(f"{text!r} is not K/N with 1 <= K <= N, e.g. 2/4")
    return int(index), int(count)


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "build", help="compile build/<variant>/ for a torch environment or the whole matrix",
        description="Build every backend of the kernel that the torch of --python supports "
                    "(CUDA torch: cuda and cpu; CPU torch: cpu) into PROJECT/build/; with "
                    "--all or --variant, the variants of the supported matrix, each in its own "
                    "pinned environment.")
    add_project(p)
    p.add_argument("--python", type=Path, default=None, metavar="PYTHON",
                   help="interpreter of the torch environment (default: this one)")
    p.add_argument("--backend", action="append", dest="backends", metavar="BACKEND",
                   help="build only this backend (repeatable)")
    p.add_argument("--cuda-capabilities", metavar="LIST",
                   help="compile only these CUDA capabilities, e.g. 9.0 or 8.0,9.0+PTX "
                        "(default: $KERNELKIT_CUDA_CAPABILITIES, else the toolkit's list)")
    p.add_argument("-j", "--jobs", type=_positive, default=None,
                   help="parallel compile jobs per variant (default: fitted to the cores and "
                        "free memory)")
    p.add_argument("--nvcc-threads", type=_positive, default=None, metavar="N",
                   help="nvcc --threads per CUDA unit: architectures compiled at once "
                        "(default: fitted to the spare cores and memory)")
    p.add_argument("-o", "--out", type=Path, default=None, metavar="DIR",
                   help="directory of the variant directories (default: PROJECT/build)")
    p.add_argument("--dry-run", action="store_true", help="print the plan, build nothing")
    p.add_argument("--json", action="store_true",
                   help="print the plan (with --dry-run) or the results as JSON")
    p.add_argument("--strict", "--fail-on-skip", dest="strict", action="store_true",
                   help="exit non-zero if any variant is skipped (default: only on failures)")
    w = p.add_argument_group("the author's loop (docs/authoring.md)")
    w.add_argument("--watch", action="store_true",
                   help="build, run tests/ against the fresh variant, print the result in one "
                        "line; again on every save (polls the sources; Ctrl-C stops)")
    w.add_argument("--watch-rounds", type=_positive, default=None, metavar="N",
                   help="with --watch: stop after N rounds (exit status of the last)")
    w.add_argument("--watch-poll", type=float, default=0.3, metavar="SECONDS",
                   help="with --watch: how often to look for changes (default 0.3)")
    w.add_argument("--no-tests", action="store_true", help="with --watch: build only")
    w.add_argument("--pytest-args", default="", metavar="ARGS",
                   help="with --watch: arguments for pytest, e.g. \"-q -k smoke\"")
    g = p.add_argument_group("build matrix (each variant in its own pinned environment)")
    g.add_argument("--all", dest="matrix_all", action="store_true",
                   help="build every variant of the supported matrix this machine can build")
    g.add_argument("--variant", dest="matrix_variants", action="append", default=[],
                   metavar="PATTERN", help="build the variants matching this fnmatch pattern "
                   "(repeatable), e.g. 'torch213-*'")
    g.add_argument("--shard", type=_shard, default=None, metavar="K/N",
                   help="build only the K-th of N deterministic slices of the matrix (one CI "
                        "job per slice; `kernelkit merge` joins their build trees)")
    g.add_argument("--parallel", type=_positive, default=None, metavar="N",
                   help="variants built at once (default: as many as cores)")
    g.add_argument("--update-toolchain", action="store_true",
                   help="reinstall environments that drifted from kernelkit.toolchain.lock")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kernelkit.builder.api import BuildSettings, plan_build, run_plan
    from kernelkit.cli.render_build import make_renderer, report_lines
    from kernelkit.generate.cuda_archs import parse_capabilities

    try:
        caps = parse_capabilities(args.cuda_capabilities) if args.cuda_capabilities else None
    except ValueError as exc:
        raise UsageError(f"--cuda-capabilities: {exc}",
                             hint="e.g. --cuda-capabilities 8.0,9.0+PTX") from None
    matrix = bool(args.matrix_all or args.matrix_variants)
    if args.shard and not matrix:
        raise UsageError("--shard slices the matrix: use it with --all or --variant",
                             hint="e.g. kernelkit build --all --shard 1/2")
    settings = BuildSettings.from_environ(cuda_capabilities=caps,
                                          update_toolchain=args.update_toolchain)
    if args.watch:
        if matrix or args.dry_run or args.json:
            raise UsageError("--watch builds for one interpreter (--python) and prints lines",
                             hint="leave out --all/--variant/--dry-run/--json")
        from kernelkit.cli.render_watch import watch

        return watch(args, settings)
    manifest, plan = plan_build(args.project, matrix=matrix, patterns=args.matrix_variants,
                                python=args.python, backends=args.backends, out_root=args.out,
                                parallel=args.parallel, jobs=args.jobs,
                                nvcc_threads=args.nvcc_threads, shard=args.shard,
                                settings=settings)
    if args.dry_run:
        print(json.dumps(plan.to_json(), indent=2) if args.json else plan.render())
        return 0
    if matrix and not args.json:
        ui.note(plan.render())
    renderer = make_renderer(args.json, quiet=ui.settings.quiet)
    try:
        outcomes = run_plan(manifest, plan, settings, on_event=renderer)
    finally:
        if renderer is not None:
            renderer.close()
    if not args.json:
        for line in report_lines(outcomes, project=args.project):
            ui.note(line)
    return _summarize(outcomes, args.json, args.strict)


def _outcome_line(o: Any) -> str:
    if o.status in ("built", "cached"):
        return f"{o.status:<7} {o.variant}  {o.path}  {o.seconds:.1f} s"
    if o.status == "skipped":
        return f"skipped {o.variant}: {o.explanation}"
    log = f"\n  log: {o.log_path}" if o.log_path and f"log: {o.log_path}" not in \
        o.explanation else ""  # a BuildError's message names its log already
    return f"FAILED {o.variant}: {o.explanation}{log}"


def _summarize(outcomes: list[Any], as_json: bool, strict: bool) -> int:
    """One line per variant, then the counts; the exit status (``ExitCode.BUILD``) on a failure,
    on a skip with ``strict``, or when nothing was built or up to date."""
    counts = {s: sum(o.status == s for o in outcomes)
              for s in ("built", "cached", "failed", "skipped")}
    if as_json:
        print(json.dumps([o.to_json() for o in outcomes], indent=2))
    else:
        for o in outcomes:
            print(_outcome_line(o))
        print(", ".join(f"{n} {s}" for s, n in counts.items()))
    if counts["failed"]:
        return ExitCode.BUILD
    if strict and counts["skipped"]:
        print("error: --strict: skipped variants count as failures", file=sys.stderr)
        return ExitCode.BUILD
    if not counts["built"] and not counts["cached"]:
        print("error: nothing was built", file=sys.stderr)
        return ExitCode.BUILD
    return ExitCode.OK
