"""docs/cli.md's conventions, held over EVERY command the parser has.

The commands are found in the parser (``build_parser`` loads every ``cli/cmd_*.py``), never
listed here, so a command added later is held to the same rules: documented in docs/cli.md,
``--json`` unless the docs say why not, the shared names and metavars, ``-v``/``-q`` after the
command, ``--version`` checked in command-line words, options that never swallow a positional,
and, run for real against an empty hub and an empty directory, an exit code from the table,
one ``error:`` line, no traceback and no Python repr. A run that could not finish in time fails
(``deadline``): a new command that blocks on bad input is a defect too.
"""

from __future__ import annotations

import argparse
import json
import re
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from kernelkit.cli.extras import missing_dependency
from kernelkit.cli.main import build_parser
from kernelkit.cli.parser import VERBOSITY, leaf_commands, version_or_latest, version_request
from kernelkit.errors import ExitCode
from tests.helpers import run_cli

DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"
PARSER = build_parser()
LEAVES = dict(leaf_commands(PARSER))
IDS = [" ".join(path) for path in LEAVES]
# commands whose run needs more than bad input to return (a server, a full end-to-end build);
# every other command is run below
LONG_RUNNING = {("serve",): "serves until stopped", ("demo",): "builds and uploads a kernel"}
# values for positionals and required options, by metavar (docs/cli.md "Names")
SAMPLES = {"REPO_ID": "nobody/missing", "KERNEL": "nobody/missing", "VERSION": "1",
           "TAG": "v1.0.0", "REVISION": "main", "SHELL": "bash", "PATTERN": "*"}
REPR = re.compile(r"\b[A-Z][A-Za-z]+\((?:'|\"|\))|\['")


def doc_section(title: str) -> str:
    text = DOC.read_text()
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else None]


def doc_table(title: str) -> list[list[str]]:
    rows = [re.split(r"(?<!\\)\|", line.strip()[1:-1]) for line in doc_section(title).splitlines()
            if line.startswith("| ") and not line.startswith("|---")]
    return [[cell.strip() for cell in row] for row in rows[1:] if not set(row[0]) <= {"-"}]


def documented_commands() -> dict[str, str]:
    """command → its ``--json`` cell (aliases in parentheses dropped)."""
    out = {}
    for row in doc_table("Commands"):
        name = re.sub(r"\s*\(.*?\)", "", row[0]).strip("`")
        out[name] = row[2]
    return out


def documented_positionals() -> set[str]:
    names = set()
    for row in doc_table("Names"):
        names |= set(re.findall(r"`([^`]+)`", row[0]))
    return names


def positionals(p: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in p._actions if not a.option_strings
            and not isinstance(a, argparse._SubParsersAction)]


def options(p: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in p._actions if a.option_strings]


def required_args(p: argparse.ArgumentParser, tmp: Path, *, optional: bool = False,
                  ) -> list[str]:
    """Arguments that make the command line parse: required positionals (``optional``: every
    positional) and options, and one option of each required mutually exclusive group."""
    args = [sample(a, tmp) for a in positionals(p)
            if a.nargs in (None, "+") or (optional and a.nargs == "?")]
    for a in options(p):
        if a.required:
            args += [a.option_strings[0], sample(a, tmp)]
    for group in p._mutually_exclusive_groups:
        if group.required:
            a = group._group_actions[0]
            args += [a.option_strings[0], sample(a, tmp)]
    return args


def sample(a: argparse.Action, tmp: Path) -> str:
    metavar = str(a.metavar)
    if metavar in ("PROJECT", "SHARD"):
        return str(tmp)
    if metavar == "OUT":
        return str(tmp / "out")
    assert metavar in SAMPLES, f"docs/cli.md names no sample for {metavar}: add one to SAMPLES"
    return SAMPLES[metavar]


@contextmanager
def deadline(seconds: int) -> Iterator[None]:
    def expire(signum: int, frame: object) -> None:
        raise TimeoutError(f"the command did not return within {seconds} s")

    old = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def check_output(out: str, err: str, code: int) -> None:
    """What any run must look like, whatever it did."""
    assert code in {int(c) for c in ExitCode}, code
    assert "Traceback" not in out + err, err
    assert not REPR.search(out + err), f"a Python repr in the output:\n{out}{err}"
    if code not in (ExitCode.OK, ExitCode.ERROR):
        assert "error:" in err, err


@pytest.fixture(autouse=True)
def in_empty_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every run starts in an empty directory (a command's default PROJECT is ``.``)."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    return cwd


# --- the docs and the parser agree -------------------------------------------------------------


def test_every_command_is_in_docs_cli_md_and_every_row_is_a_command() -> None:
    assert sorted(documented_commands()) == sorted(IDS), \
        "docs/cli.md 'Commands' must have exactly one row per command"


def test_the_exit_code_table_is_errors_py() -> None:
    rows = {(int(code), name) for code, name, _ in doc_table("Exit codes")}
    assert rows == {(int(c), c.name) for c in ExitCode}
    readme = (DOC.parents[1] / "README.md").read_text()
    for c in ExitCode:
        assert f"| {int(c)} |" in readme, f"README.md's exit code table lacks {int(c)}"


# --- every command ------------------------------------------------------------------------------


@pytest.mark.parametrize("path", list(LEAVES), ids=IDS)
def test_json_unless_the_docs_say_why_not(path: tuple[str, ...]) -> None:
    p = LEAVES[path]
    has_json = any("--json" in a.option_strings for a in options(p))
    cell = documented_commands()[" ".join(path)]
    if cell.startswith("no:"):
        assert not has_json and len(cell) > len("no: "), "say why there is no --json"
    else:
        assert has_json, f"`{' '.join(path)}` prints data: give it --json (docs/cli.md)"


@pytest.mark.parametrize("path", list(LEAVES), ids=IDS)
def test_positionals_use_the_shared_names(path: tuple[str, ...]) -> None:
    names = documented_positionals()
    for a in positionals(LEAVES[path]):
        assert a.metavar in names, f"{a.metavar or a.dest}: not a name of docs/cli.md 'Names'"
        plural = "s" if a.nargs in ("+", "*") else ""
        assert a.dest == re.sub(r"\W", "", str(a.metavar)).lower() + plural, a.dest


@pytest.mark.parametrize("path", list(LEAVES), ids=IDS)
def test_options_take_one_value_have_help_and_check_versions(path: tuple[str, ...]) -> None:
    for a in options(LEAVES[path]):
        assert a.nargs not in ("+", "*"), \
            f"{a.option_strings[0]} swallows what follows it: take one value (a,b) or repeat"
        assert a.help, f"{a.option_strings[0]} has no help"
        if "--version" in a.option_strings and not isinstance(a, argparse._VersionAction):
            assert a.type in (version_request, version_or_latest), \
                "--version must be checked at parse time (cli/parser.py add_version)"


def test_an_option_has_one_metavar_everywhere() -> None:
    seen: dict[str, set[str]] = {}
    for p in LEAVES.values():
        for a in options(p):
            if a.nargs != 0 and a.help != argparse.SUPPRESS:
                for flag in a.option_strings:
                    if flag.startswith("--"):
                        seen.setdefault(flag, set()).add(str(a.metavar or a.dest.upper()))
    assert {f: m for f, m in seen.items() if len(m) > 1} == {}


@pytest.mark.parametrize("path", list(LEAVES), ids=IDS)
def test_verbose_and_quiet_before_or_after_the_command(path: tuple[str, ...],
                                                       tmp_path: Path) -> None:
    rest = required_args(LEAVES[path], tmp_path)
    for argv, level in ((["-v", *path, *rest], 1), ([*path, "-v", *rest], 1),
                        ([*path, *rest, "-q"], -1), (["-q", *path, "--verbose", *rest], 1),
                        ([*path, *rest], 0)):
        assert getattr(PARSER.parse_args(argv), VERBOSITY) == level, argv


@pytest.mark.parametrize("path", list(LEAVES), ids=IDS)
def test_help_and_usage_errors(path: tuple[str, ...], tmp_path: Path) -> None:
    out = run_cli(*path, "--help")
    assert out.returncode == 0 and out.stdout.startswith("usage: kernelkit")
    bad = run_cli(*path, *required_args(LEAVES[path], tmp_path), "--no-such-option")
    assert bad.returncode == ExitCode.USAGE and "error:" in bad.stderr


@pytest.mark.parametrize("path", list(LEAVES), ids=IDS)
def test_unknown_repository_is_not_found(path: tuple[str, ...], tmp_path: Path) -> None:
    """Every command that names a hub repository: exit code 3 for one the hub lacks."""
    p = LEAVES[path]
    if not any(a.metavar in ("REPO_ID", "KERNEL") for a in positionals(p)):
        pytest.skip("takes no repository")
    hub = tmp_path / "hub"
    hub.mkdir()
    flags = {f for a in options(p) for f in a.option_strings}
    extra = ["--hub", str(hub)] if "--hub" in flags else []
    extra += ["--trust-remote-code"] if "--trust-remote-code" in flags else []
    with deadline(60):
        out = run_cli(*path, *required_args(p, tmp_path / "empty", optional=True), *extra)
    check_output(out.stdout, out.stderr, out.returncode)
    assert out.returncode == ExitCode.NOT_FOUND, out.stderr
    assert "nobody/missing" in out.stderr


@pytest.mark.parametrize("path", list(LEAVES), ids=IDS)
def test_offline_with_a_hub_is_offline_or_not_found(path: tuple[str, ...], tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Offline mode never reaches a hub: a command with ``--hub`` given a remote one exits 5
    (or 3 when the cache answers that the repository is unknown), never a network error."""
    p = LEAVES[path]
    if not any("--hub" in a.option_strings for a in options(p)) or path in LONG_RUNNING:
        pytest.skip("takes no hub")
    monkeypatch.setenv("KERNELKIT_OFFLINE", "1")
    # nothing listens there: a command that went online would fail with a network error (1)
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    (tmp_path / "empty").mkdir()
    with deadline(60):
        out = run_cli(*path, *required_args(p, tmp_path / "empty"), "--hub", "hf")
    check_output(out.stdout, out.stderr, out.returncode)
    assert out.returncode in (ExitCode.OFFLINE, ExitCode.NOT_FOUND, ExitCode.INVALID_INPUT), \
        out.stderr


@pytest.mark.parametrize("path", list(LEAVES), ids=IDS)
def test_runs_on_bad_input_end_in_one_clean_line(path: tuple[str, ...], tmp_path: Path) -> None:
    """Each command run for real on an empty directory (and an empty hub): an exit code of
    the table, one ``error:`` line where it failed, no traceback, no repr; with ``--json``
    and success, one JSON document on stdout."""
    if path in LONG_RUNNING:
        pytest.skip(LONG_RUNNING[path])
    p = LEAVES[path]
    empty = tmp_path / "empty"
    empty.mkdir()
    has_json = any("--json" in a.option_strings for a in options(p))
    for extra in (["--json"] if has_json else []), []:
        with deadline(120):
            out = run_cli(*path, *required_args(p, empty), *extra)
        check_output(out.stdout, out.stderr, out.returncode)
        if extra and out.returncode == ExitCode.OK:
            json.loads(out.stdout)


# --- optional dependencies ----------------------------------------------------------------------


def test_every_extra_has_an_install_hint() -> None:
    """Each package of each extra in pyproject.toml, missing, ends in the `pip install
    'kernelkit[extra]'` that brings it (read from the installed metadata: reinstall kernelkit
    (`pip install -e .`) if this fails after an extra was added)."""
    import tomllib

    from kernelkit.cli.extras import module_of

    extras = tomllib.loads((DOC.parents[1] / "pyproject.toml").read_text())[
        "project"]["optional-dependencies"]
    for extra, requirements in extras.items():
        if extra == "dev":
            continue
        for req in requirements:
            dist = re.split(r"[<>=!~;\[ ]", req, maxsplit=1)[0]
            if dist.lower() == "kernelkit":
                continue  # an extra that includes another one (sigstore = sign + sigstore)
            exc = ModuleNotFoundError(f"No module named {module_of(dist)!r}",
                                      name=module_of(dist))
            hint = missing_dependency(exc)
            assert hint is not None and hint.extra == extra, (extra, dist)
            assert f"pip install 'kernelkit[{extra}]'" in str(hint)
    assert missing_dependency(ModuleNotFoundError("x", name="torch")) is not None
    assert missing_dependency(ModuleNotFoundError("x", name="no_such_thing")) is None
