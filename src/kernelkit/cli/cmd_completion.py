"""``kernelkit completion bash|zsh|fish``: print a shell completion script, generated from the
argument parser (``cli/completion.py``)."""

from __future__ import annotations

import argparse

from kernelkit.cli.completion import SCRIPTS


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "completion", help="print a shell completion script (bash, zsh, fish)",
        description="Print the completion script of a shell. bash: eval \"$(kernelkit "
        "completion bash)\" in ~/.bashrc; zsh: eval \"$(kernelkit completion zsh)\" in "
        "~/.zshrc; fish: kernelkit completion fish > ~/.config/fish/completions/kernelkit.fish")
    p.add_argument("shell", metavar="SHELL", choices=sorted(SCRIPTS),
                   help="the shell: " + ", ".join(sorted(SCRIPTS)))
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kernelkit.cli.main import build_parser

    print(SCRIPTS[args.shell](build_parser()), end="")
    return 0
