"""``kernelkit init [PATH] [--name OWNER/REPO] [--backends ...] [--template T]``."""

from __future__ import annotations

import argparse
from pathlib import Path

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
    p.add_argument("path", nargs="?", metavar="PATH",
                   help="directory to create (default: ./<repo> with --name, else the current "
                   "directory); a PATH of the form OWNER/REPO names the project")
    p.add_argument("--name", metavar="OWNER/REPO",
                   help="hub repository id; the kernel is named after REPO")
    p.add_argument("--backends", nargs="+", metavar="BACKEND",
                   help="backends to create kernels for (default: the template's, e.g. cpu cuda; "
                   "'all' = every backend of the template)")
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
    p.set_defaults(func=run_init)


def run_init(args: argparse.Namespace) -> int:
    dest, info = resolve_target(args.path, args.name, Path.cwd())
    backends = args.backends or list(load_template(args.template).default_backends)
    written = init_project(dest, name=info.repo_id, backends=backends, template=args.template,
                           license=args.license, overwrite=args.overwrite, git=not args.no_git)
    print(f"Initialized {info.repo_id} ({args.template}; backends: {', '.join(backends)}) "
          f"at {dest}")
    for path in written:
        print(f"  {path.relative_to(dest)}")
    if args.toolchain_lock:
        from kernelkit.builder.api import write_toolchain_lock
        from kernelkit.cli.cmd_toolchain import print_lock_result

        print_lock_result(*write_toolchain_lock(dest))
    return 0
