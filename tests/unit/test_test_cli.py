"""``kernelkit test`` arguments: KERNEL_DIR, kernelkit's options, pytest's after ``--``."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelkit.cli.cmd_test import _split_pytest_args
from kernelkit.cli.main import build_parser


@pytest.mark.parametrize(("argv", "kernel_dir", "patterns", "as_json", "pytest_args"), [
    (["test"], ".", [], False, []),
    (["test", "--", "-k", "cpu"], ".", [], False, ["-k", "cpu"]),
    (["test", "proj", "--", "-q"], "proj", [], False, ["-q"]),
    (["test", "proj", "--json", "--variant", "torch-*", "--", "-x", "--lf"], "proj",
     ["torch-*"], True, ["-x", "--lf"]),
    (["test", "--variant", "a", "proj", "-q"], "proj", ["a"], False, ["-q"]),
    (["test", "--variant", "a", "--", "-k", "x"], ".", ["a"], False, ["-k", "x"]),
    # argparse drops the first --: a pytest option named like ours needs a second one
    (["test", "proj", "--", "--", "--json"], "proj", [], False, ["--json"]),
])
def test_arguments(argv: list[str], kernel_dir: str, patterns: list[str], as_json: bool,
                   pytest_args: list[str]) -> None:
    args = build_parser().parse_args(argv)
    extra = _split_pytest_args(args)
    assert (Path(args.project), args.patterns, args.json, extra) == \
        (Path(kernel_dir), patterns, as_json, pytest_args)
