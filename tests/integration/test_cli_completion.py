"""`kernelkit completion bash|zsh|fish` (docs/cli.md "Shell completion"), held over every
command the parser has: the bash script is loaded into a real bash and asked what completes
after each command path, as the shell asks it on Tab. zsh runs that same bash function
through its ``bashcompinit``; fish (not installed here) is checked line by line against the
parser."""

from __future__ import annotations

import shlex
import shutil
import subprocess

import pytest

from kernelkit.cli.main import build_parser
from kernelkit.cli.parser import commands, subcommands
from tests.helpers import run_cli

PARSER = build_parser()
TREE = dict(commands(PARSER))


def script(shell: str) -> str:
    out = run_cli("completion", shell)
    assert out.returncode == 0, out.stderr
    return out.stdout


def complete_in_bash(words_sets: list[list[str]]) -> list[list[str]]:
    """What bash offers for each partial command line (its last word being completed)."""
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash")
    calls = []
    for words in words_sets:
        line = ["kernelkit", *words]
        calls.append(f"COMP_WORDS=({' '.join(shlex.quote(w) for w in line)}); "
                     f"COMP_CWORD={len(line) - 1}; COMPREPLY=(); _kernelkit; "
                     "printf '%s ' \"${COMPREPLY[@]}\"; echo")
    proc = subprocess.run([bash, "--norc", "--noprofile", "-c",
                           script("bash") + "\n" + "\n".join(calls)],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == len(words_sets), proc.stdout
    return [sorted(line.split()) for line in lines]


def test_bash_completes_every_command_subcommand_and_option() -> None:
    """Tab after `kernelkit`, after each command with subcommands (`hub`, `cache`, ...) and
    `-` after each command: exactly the parser's names, with -v/-q everywhere."""
    asks: list[list[str]] = []
    expect: list[list[str]] = []
    for path, p in TREE.items():
        below = subcommands(p)
        if below:
            asks.append([*path, ""])
            expect.append(sorted(below))
        asks.append([*path, "-"])
        opts = sorted({o for a in p._actions for o in a.option_strings
                       if a.help != "==SUPPRESS=="})
        expect.append(opts)
        assert "-v" in opts and "-q" in opts, path
    got = complete_in_bash(asks)
    for words, want, have in zip(asks, expect, got, strict=True):
        assert have == want, f"kernelkit {' '.join(words)}<Tab>"
    assert "build" in got[0] and "completion" in got[0]


def test_bash_completes_choices_values_and_a_prefix() -> None:
    got = complete_in_bash([["completion", ""], ["bu"], ["hub", "r"], ["-v", "hub", "l"],
                            ["variants", "--hub", "/nonexistent-dir-xyz/"]])
    assert got[0] == ["bash", "fish", "zsh"]
    assert got[1] == ["build"]
    assert got[2] == ["retag", "rm-version"]
    assert got[3] == ["list", "ls"]  # -v before the command does not hide the path
    assert got[4] == []  # a value: files (none there), never command names


def test_zsh_loads_the_bash_function_and_fish_lists_every_command() -> None:
    zsh = script("zsh")
    assert zsh.startswith("#compdef kernelkit") and "bashcompinit" in zsh
    assert script("bash") in zsh
    fish = script("fish").splitlines()
    for path, p in TREE.items():
        for name in subcommands(p):
            assert any(f"-a {name}" in line and all(f"from {w}" in line for w in path)
                       for line in fish if line.startswith("complete -c kernelkit")), \
                ("fish misses", *path, name)
        for flag in ("verbose", "quiet"):
            assert any(f"-l {flag}" in line and all(f"from {w}" in line for w in path)
                       for line in fish), ("fish misses --" + flag, *path)
