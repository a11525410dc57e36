"""``kernelkit shell --variant V [KERNEL_DIR] [--exec CMD ...]``: the build environment of one
variant: print how to activate it, or run a command inside it."""

from __future__ import annotations

import argparse
import shlex
import subprocess
from pathlib import Path


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("shell", help="enter (or run a command in) a variant's build environment")
    p.add_argument("kernel_dir", nargs="?", type=Path, default=Path("."), metavar="KERNEL_DIR",
                   help="the kernel project directory (default: the current directory)")
    p.add_argument("--variant", required=True, help="the variant name, e.g. "
                   "torch213-cxx11-cpu-x86_64-linux")
    p.add_argument("--update-toolchain", action="store_true",
                   help="reinstall an environment that drifted from kernelkit.toolchain.lock")
    p.add_argument("--exec", dest="exec_cmd", nargs=argparse.REMAINDER, metavar="CMD",
                   help="run CMD (and its arguments) inside the environment")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from kernelkit.builder.api import env_for_variant

    env = env_for_variant(args.kernel_dir, args.variant, update=args.update_toolchain)
    if args.exec_cmd:
        # Interactive passthrough (stdin/stdout of the user's command): not captured, so not
        # through util.run.
        return subprocess.call(args.exec_cmd, env=env.environ())
    print(f"# build environment of {args.variant}: {env.path}")
    print(f"source {shlex.quote(str(env.path / 'bin' / 'activate'))}")
    if env.cuda_home is not None:
        print(f"export CUDA_HOME={shlex.quote(str(env.cuda_home))}")
        print(f"export PATH={shlex.quote(str(env.cuda_home / 'bin'))}:\"$PATH\"")
    print(f"# or: kernelkit shell {args.kernel_dir} --variant {args.variant} --exec bash")
    return 0
