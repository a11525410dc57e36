"""``kernelkit shell --variant PATTERN [PROJECT] [--exec CMD ...]``: the build environment of one
variant: print how to activate it, or run a command inside it."""

from __future__ import annotations

import argparse
import shlex
import subprocess
from pathlib import Path

from kernelkit.cli.parser import add_project


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("shell", help="enter (or run a command in) a variant's build environment")
    add_project(p)
    p.add_argument("--variant", required=True, metavar="PATTERN",
                   help="the variant: its name (torch213-cxx11-cpu-x86_64-linux) or a fnmatch "
                   "pattern that matches exactly one of the project's ('torch213-*-cpu-*')")
    p.add_argument("--update-toolchain", action="store_true",
                   help="reinstall an environment that drifted from kernelkit.toolchain.lock")
    p.add_argument("--exec", dest="exec_cmd", nargs=argparse.REMAINDER, metavar="CMD",
                   help="run CMD (and its arguments) inside the environment")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from kernelkit.builder.api import env_for_variant

    variant = _one_variant(args.project, args.variant)
    env = env_for_variant(args.project, variant, update=args.update_toolchain)
    if args.exec_cmd:
        # Interactive passthrough (stdin/stdout of the user's command): not captured, so not
        # through util.run.
        return subprocess.call(args.exec_cmd, env=env.environ())
    print(f"# build environment of {variant}: {env.path}")
    print(f"source {shlex.quote(str(env.path / 'bin' / 'activate'))}")
    if env.cuda_home is not None:
        print(f"export CUDA_HOME={shlex.quote(str(env.cuda_home))}")
        print(f"export PATH={shlex.quote(str(env.cuda_home / 'bin'))}:\"$PATH\"")
    print(f"# or: kernelkit shell {shlex.quote(str(args.project))} --variant {variant} "
          "--exec bash")
    return 0


def _one_variant(project: Path, pattern: str) -> str:
    """The one variant of the project's matrix ``pattern`` names (a plain name as it is)."""
    if not any(c in pattern for c in "*?["):
        return pattern
    from fnmatch import fnmatchcase

    from kernelkit.builder.api import plan_variants
    from kernelkit.errors import UsageError
    from kernelkit.variants.host import host_platform

    _, plan = plan_variants(project, system=host_platform())
    names = sorted(b.target.variant for b in plan.builds if fnmatchcase(b.target.variant, pattern))
    if len(names) != 1:
        raise UsageError(f"--variant {pattern!r} matches {len(names)} variants of the project"
                         + (f": {', '.join(names)}" if names else ""),
                         hint="give a pattern that matches one (`kernelkit list-variants` lists "
                              "them)")
    return names[0]
