"""Options whose value is another tool's command line (``build --watch --pytest-args``)."""

from __future__ import annotations

from kernelkit.cli.main import build_parser
from kernelkit.cli.parser import glue_raw_values


def test_a_value_that_starts_with_a_dash_is_taken_as_it_is() -> None:
    parser = build_parser()
    for value in ("-x", "-q -k smoke", "-q", "--lf"):
        args = parser.parse_args(glue_raw_values(["build", "--watch", "--pytest-args", value]))
        assert args.pytest_args == value
        # -v/-q of kernelkit still work around it
        args = parser.parse_args(glue_raw_values(
            ["build", "-q", "--pytest-args", value, "--watch"]))
        assert args.pytest_args == value and args.watch


def test_words_after_a_double_dash_are_left_alone() -> None:
    assert glue_raw_values(["test", "--", "--pytest-args", "-x"]) == \
        ["test", "--", "--pytest-args", "-x"]
    assert glue_raw_values(["build", "--pytest-args"]) == ["build", "--pytest-args"]
