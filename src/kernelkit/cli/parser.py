"""The argument parser's conventions, applied to every command (docs/cli.md).

* :class:`Parser`: argparse with "did you mean" for a mistyped command or choice
  (``kernelkit bulid`` → ``did you mean 'build'?``).
* :func:`add_verbosity`: ``-v/--verbose`` and ``-q/--quiet`` on every parser of the tree, so
  they work before or after the command (``kernelkit -v build``, ``kernelkit build -v``).
* :func:`commands`: every command of the tree (``("hub", "ls")``) with its parser: what the
  completion scripts, docs/cli.md and the convention test walk, so a command added later is
  covered without being listed anywhere.
* :func:`version_request`: ``--version`` values checked at parse time, in command-line words.
"""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Iterator, Sequence
from typing import Any

VERBOSITY = "verbosity"  # the Namespace attribute: -1 quiet, 0 normal, 1 verbose


class Parser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` that suggests the closest command or choice."""

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        choices = action.choices
        if choices is None or value in choices:
            return
        names = [str(c) for c in choices]
        close = difflib.get_close_matches(str(value), names, n=3, cutoff=0.6)
        what = "command" if isinstance(action, argparse._SubParsersAction) else "choice"
        text = f"unknown {what} {value!r}"
        if close:
            text += f"; did you mean {' or '.join(repr(c) for c in close)}?"
        else:
            text += f" (choose from {', '.join(names)})"
        raise argparse.ArgumentError(action, text)


def add_verbosity(parser: argparse.ArgumentParser, *, top: bool) -> None:
    """``-v``/``-q`` on ``parser``; below the top they default to "not given" so that a value
    given before the command is kept."""
    default: Any = 0 if top else argparse.SUPPRESS
    group = parser.add_argument_group("output")
    group.add_argument("-v", "--verbose", dest=VERBOSITY, action="store_const", const=1,
                       default=default, help="more detail: every external command, "
                       "third-party log lines (HTTP requests), timings")
    group.add_argument("-q", "--quiet", dest=VERBOSITY, action="store_const", const=-1,
                       default=default, help="only the results and errors: no progress, no "
                       "notes")


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The commands directly below ``parser`` (aliases included), by name."""
    found: dict[str, argparse.ArgumentParser] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found.update(action.choices)
    return found


def aliases(parser: argparse.ArgumentParser) -> dict[str, str]:
    """Alias → the command's own name, for the commands directly below ``parser``."""
    out: dict[str, str] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            first: dict[int, str] = {}
            for name, sub in action.choices.items():
                if id(sub) in first:
                    out[name] = first[id(sub)]
                else:
                    first[id(sub)] = name
    return out


def commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = (),
             ) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every parser of the tree, depth first, with its command path (``()`` for the top);
    an alias is not listed again."""
    yield path, parser
    alias = aliases(parser)
    for name, sub in subcommands(parser).items():
        if name not in alias:
            yield from commands(sub, (*path, name))


def leaf_commands(parser: argparse.ArgumentParser,
                  ) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """The commands that run something (no subcommands below them)."""
    for path, sub in commands(parser):
        if path and not subcommands(sub):
            yield path, sub


def version_request(text: str) -> str:
    """``--version``: a major version (``1``) or a specifier over release tags
    (``'>=1.1,<2'``); anything else is refused here, in command-line words (the library's
    own message speaks Python: ``version=1``)."""
    from kernelkit.errors import VersionRequestError
    from kernelkit.loader.versions import parse_version_request

    try:
        parse_version_request(text)
    except VersionRequestError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is neither a major version (--version 1) nor a version specifier "
            "over release tags (--version '>=1.1,<2')") from None
    return text


def version_or_latest(text: str) -> str:
    """:func:`version_request`, or ``latest`` (the newest major version)."""
    return text if text == "latest" else version_request(text)


# --- the shared arguments: one name, one metavar per concept (docs/cli.md "Names") ----------

HUB_HELP = ("hub: a directory, git+<url> or hf (default: $KERNELKIT_HUB, else "
            "$KERNELKIT_HUB_DIR, else ~/.cache/kernelkit/hub)")


def add_project(p: argparse.ArgumentParser, help: str = "the kernel project directory "
                "(default: the current directory)") -> None:
    """The positional ``PROJECT``: a local directory, ``.`` when left out."""
    from pathlib import Path

    p.add_argument("project", nargs="?", type=Path, default=Path("."), metavar="PROJECT",
                   help=help)


def add_repo_id(p: argparse.ArgumentParser, help: str = "the hub repository, ORG/NAME",
                *, optional: bool = False) -> None:
    """The positional ``REPO_ID``: ``ORG/NAME`` on a hub."""
    if optional:
        p.add_argument("repo_id", metavar="REPO_ID", help=help, nargs="?")
    else:
        p.add_argument("repo_id", metavar="REPO_ID", help=help)


def add_kernel(p: argparse.ArgumentParser, help: str = "ORG/NAME on the hub, or a local "
               "kernel directory (an existing directory wins)") -> None:
    """The positional ``KERNEL``: a hub repository or a local directory."""
    p.add_argument("kernel", metavar="KERNEL", help=help)


def add_hub(p: argparse.ArgumentParser, help: str = HUB_HELP) -> None:
    p.add_argument("--hub", metavar="HUB", default=None, help=help)


def add_json(p: argparse.ArgumentParser, help: str = "print the result as one JSON document "
             "on stdout (docs/cli.md lists its keys)") -> None:
    p.add_argument("--json", action="store_true", help=help)


def add_version(p: argparse.ArgumentParser | argparse._MutuallyExclusiveGroup, *,
                latest: bool = False, help: str | None = None) -> None:
    p.add_argument("--version", metavar="VERSION",
                   type=version_or_latest if latest else version_request,
                   help=help or "a major version (1: the branch v1) or a specifier over "
                   "release tags ('>=1.1,<2')" + (", or latest" if latest else ""))


def add_revision(p: argparse.ArgumentParser | argparse._MutuallyExclusiveGroup) -> None:
    p.add_argument("--revision", metavar="REVISION", help="a branch, tag or commit")


#: options whose value is a command line for another tool: it may start with "-" (`--pytest-args
#: "-x -k smoke"`), which argparse would read as an option of ours (`-x`, or `-q` + "-k smoke")
RAW_VALUE_OPTIONS = ("--pytest-args",)


def glue_raw_values(argv: Sequence[str]) -> list[str]:
    """``--pytest-args VALUE`` as ``--pytest-args=VALUE``, so VALUE is taken as it is."""
    out: list[str] = []
    words = iter(argv)
    for word in words:
        if word == "--":
            out += [word, *words]
            break
        nxt = next(words, None) if word in RAW_VALUE_OPTIONS else None
        out.append(word if nxt is None else f"{word}={nxt}")
    return out
