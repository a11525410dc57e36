"""``kernelkit init [PROJECT] [--name OWNER/REPO] [--backends cpu,cuda] [--template T]``."""

from __future__ import annotations

import argparse
from pathlib import Path

from kernelkit.cli.parser import add_json
from kernelkit.cli.ui import emit_json
from kernelkit.errors import UsageError
from kernelkit.scaffold import (
    DEFAULT_OWNER,
    available_templates,
    init_project,
    load_template,
    resolve_target,
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "init",
        help="create a new kernel project from a template",
        description="Create a kernel project (build.toml, sources, tests, card) from a template. "
        f"Without an owner in --name, {DEFAULT_OWNER} is used. Templates: "
        + ", ".join(available_templates()),
    )
    p.add_argument("project", nargs="?", metavar="PROJECT",
                   help="directory to create (default: ./<repo> with --name, else the current "
                   "directory); a PROJECT of the form OWNER/REPO names the project")
    p.add_argument("--name", metavar="OWNER/REPO",
                   help="hub repository id; the kernel is named after REPO")
    p.add_argument("--backends", action="append", type=_backend_list, metavar="LIST",
                   help="backends to create kernels for, comma-separated or repeated "
                   "(--backends cpu,cuda; default: the template's; 'all' = every backend of "
                   "the template)")
    p.add_argument("--template", default="img2gray", choices=available_templates(),
                   help="project template (default: img2gray)")
    p.add_argument("--license", default="Apache-2.0", help="license id (default: Apache-2.0)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace scaffold files that already exist (other files are kept)")
    p.add_argument("--no-git", action="store_true",
                   help="do not run `git init` / `git add` in the new project")
    p.add_argument("--toolchain-lock", action="store_true",
                   help="also write kernelkit.toolchain.lock (pins every variant's build "
                   "environment; resolving all variants can take minutes offline)")
    add_json(p)
    p.set_defaults(func=run_init)


def _backend_list(text: str) -> list[str]:
    names = [b.strip() for b in text.split(",")]
    if not all(names):
        raise argparse.ArgumentTypeError(f"{text!r}: expected names separated by commas, "
                                         "e.g. cpu,cuda")
    return names


def run_init(args: argparse.Namespace) -> int:
    from kernelkit.manifest.model import BACKENDS

    if args.project in (*BACKENDS, "all") and not Path(args.project).exists():
        raise UsageError(f"PROJECT {args.project!r} is a backend name: a directory of that "
                         "name would be created",
                         hint="list backends with commas (--backends cpu,cuda), or pass "
                              f"./{args.project} if you mean the directory")
    dest, info = resolve_target(args.project, args.name, Path.cwd())
    requested = [b for group in args.backends or [] for b in group]
    backends = requested or list(load_template(args.template).default_backends)
    written = init_project(dest, name=info.repo_id, backends=backends, template=args.template,
                           license=args.license, overwrite=args.overwrite, git=not args.no_git)
    if args.json:
        lock = None
        if args.toolchain_lock:
            from kernelkit.builder.api import write_toolchain_lock

            lock = str(write_toolchain_lock(dest)[0])
        emit_json({"project": str(dest), "repo_id": info.repo_id, "template": args.template,
                   "backends": list(backends),
                   "written": [str(p.relative_to(dest)) for p in written],
                   "toolchain_lock": lock})
        return 0
    print(f"Initialized {info.repo_id} ({args.template}; backends: {', '.join(backends)}) "
          f"at {dest}")
    for path in written:
        print(f"  {path.relative_to(dest)}")
    if args.toolchain_lock:
        from kernelkit.builder.api import write_toolchain_lock
        from kernelkit.cli.cmd_toolchain import print_lock_result

        print_lock_result(*write_toolchain_lock(dest))
    return 0
