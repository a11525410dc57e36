"""``kernelkit build``: compile the variants of a kernel for one Python environment."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "build", help="compile build/<variant>/ for a torch environment",
        description="Build every backend of the kernel that the torch of --python supports "
                    "(CUDA torch: cuda and cpu; CPU torch: cpu) into KERNEL_DIR/build/.")
    p.add_argument("kernel_dir", nargs="?", default=".", type=Path, metavar="KERNEL_DIR")
    p.add_argument("--python", type=Path, default=None,
                   help="interpreter of the torch environment (default: this one)")
    p.add_argument("--backend", action="append", dest="backends", metavar="B",
                   help="build only this backend (repeatable)")
    p.add_argument("--cuda-capabilities", metavar="LIST",
                   help="compile only these CUDA capabilities, e.g. 9.0 or 8.0,9.0+PTX "
                        "(default: $KERNELKIT_CUDA_CAPABILITIES, else the toolkit's list)")
    p.add_argument("-j", "--jobs", type=int, default=None, help="parallel compile jobs")
    p.add_argument("-o", "--out", type=Path, default=None,
                   help="directory of the variant directories (default: KERNEL_DIR/build)")
    p.set_defaults(func=run)
    from kernelkit.builder.matrix_build import add_matrix_arguments  # --all/--variant (matrix)
    add_matrix_arguments(p)


def run(args: argparse.Namespace) -> int:
    from kernelkit.builder.matrix_build import run_matrix_build
    if (matrix_rc := run_matrix_build(args)) is not None:
        return matrix_rc
    from kernelkit.builder.api import build
    from kernelkit.generate.cuda_archs import parse_capabilities

    caps = None
    if args.cuda_capabilities:
        try:
            caps = parse_capabilities(args.cuda_capabilities)
        except ValueError as exc:
            print(f"error: --cuda-capabilities: {exc}", file=sys.stderr)
            return 2
    results = build(args.kernel_dir, python=args.python, backends=args.backends,
                    out_root=args.out, cuda_capabilities=caps, jobs=args.jobs,
                    on_start=lambda b: print(f"building {b} ...", file=sys.stderr, flush=True))
    for r in results:
        print(f"{r.variant}  {r.path}  {r.seconds:.1f} s")
    return 0
