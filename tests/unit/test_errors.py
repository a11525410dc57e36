"""The error tree and the exit-code table (``kernelkit.errors``), through the real CLI."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

import kernelkit.errors as errors
from kernelkit.cli.main import main
from kernelkit.errors import (
    EXIT_CODES,
    ExitCode,
    IntegrityError,
    KernelkitError,
    LockMismatchError,
    NotBuildableError,
    UsageError,
    VariantNotInMatrixError,
    VersionNotFoundError,
    exit_code,
)

SRC = Path(errors.__file__).resolve().parent
PENDING: set[tuple[str, str]] = set()


def _exception_classes_outside_errors() -> set[tuple[str, str]]:
    found = set()
    for path in SRC.rglob("*.py"):
        if path.name == "errors.py" or "templates" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and any(
                    (isinstance(b, ast.Name) and b.id.endswith(("Error", "Exception")))
                    or (isinstance(b, ast.Attribute) and b.attr.endswith(("Error", "Exception")))
                    for b in node.bases):
                found.add((path.relative_to(SRC).as_posix(), node.name))
    return found


def test_every_exception_class_lives_in_errors_py() -> None:
    assert _exception_classes_outside_errors() - PENDING == set()


def test_every_error_in_the_table_is_a_kernelkit_error() -> None:
    classes = [c for _, c in inspect.getmembers(errors, inspect.isclass)
               if issubclass(c, BaseException)]
    assert all(issubclass(c, KernelkitError) for c in classes)
    assert set(EXIT_CODES) <= set(classes)
    codes = [int(c) for c in ExitCode]
    assert len(codes) == len(set(codes)) and ExitCode.OK == 0 and ExitCode.USAGE == 2


@pytest.mark.parametrize(("exc", "code"), [
    (KernelkitError("x"), ExitCode.ERROR),
    (UsageError("x"), ExitCode.USAGE),
    (VersionNotFoundError("o/n", "v3", ["v1"], "Version 3 not found"), ExitCode.NOT_FOUND),
    (IntegrityError("f", "a", "b"), ExitCode.INTEGRITY),
    (LockMismatchError("f", "a", "b"), ExitCode.INTEGRITY),  # nearest base wins
    (VariantNotInMatrixError("torch999-cpu", ["torch213-cpu"]), ExitCode.BUILD),
    (PermissionError(13, "Permission denied"), ExitCode.ERROR),
    (KeyboardInterrupt(), ExitCode.INTERRUPTED),
])
def test_exit_code_of_each_kind(exc: BaseException, code: ExitCode) -> None:
    assert exit_code(exc) == code


def test_variant_not_in_matrix_error_keeps_the_builder_constructor() -> None:
    err = VariantNotInMatrixError("torch999-cpu", ["a", "b"])
    assert isinstance(err, NotBuildableError)
    assert err.variant == "torch999-cpu" and err.known == ["a", "b"]
    assert "not buildable" in str(err) and "one of: a, b" in str(err)


def test_usage_error_from_a_command_exits_2(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    # a git remote cannot list its repositories: kernelkit hub ls without ORG/NAME is misuse
    assert main(["hub", "list", "--hub", f"git+file://{tmp_path}/remote"]) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "kernelkit hub ls ORG/NAME" in err


def test_not_found_and_invalid_input_exit_codes(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "proj").mkdir()
    assert main(["variants", str(tmp_path / "proj"), "--version", "1"]) == ExitCode.USAGE
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "build.toml").write_text("[general\n")
    assert main(["check-config", str(bad)]) == ExitCode.INVALID_INPUT
    assert "error: " in capsys.readouterr().err
