"""Every invalid manifest in tests/data/manifests reports exactly the problems it declares.

Each error file lists what it must trigger in comment lines
``# expect: <field> @ <line>: <message substring>`` (``-`` for no field / no line). The test
asserts the same number of problems, each with that field, line and message, so a missing
problem, an extra one, or a wrong line all fail.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from kernelkit.errors import ManifestError, Problem
from kernelkit.manifest import load_manifest, parse_manifest

DATA = Path(__file__).resolve().parents[1] / "data" / "manifests"
EXPECT = re.compile(r"^# expect: (?P<field>\S+) @ (?P<line>\S+): (?P<message>.+)$", re.M)
ERROR_FILES = sorted(p for p in DATA.glob("*.toml") if EXPECT.search(p.read_text()))
SOURCE_FILES = ("missing_source",)  # need a project directory: tested on their own


def expectations(path: Path) -> list[tuple[str, int | None, str]]:
    return [
        (m["field"] if m["field"] != "-" else "",
         int(m["line"]) if m["line"] != "-" else None,
         m["message"])
        for m in EXPECT.finditer(path.read_text())
    ]


def matches(problem: Problem, field: str, line: int | None, message: str) -> bool:
    return problem.field == field and problem.line == line and message in problem.message


def test_there_is_an_error_file_per_error_class() -> None:
    names = {p.stem for p in ERROR_FILES}
    for required in ("unknown_key", "bad_name", "missing_license", "wrong_type_version",
                     "bad_backend", "bad_git_url", "kernel_dep_both", "unknown_depends",
                     "missing_source", "no_framework", "two_frameworks", "edition_6", "v3",
                     "syntax_error", "bad_capability", "several_problems"):
        assert required in names


@pytest.mark.parametrize("path", [p for p in ERROR_FILES if p.stem not in SOURCE_FILES],
                         ids=lambda p: p.stem)
def test_error_file_reports_exactly_its_problems(path: Path) -> None:
    expected = expectations(path)
    with pytest.raises(ManifestError) as info:
        parse_manifest(path.read_text(), path, check_sources=False)
    problems = info.value.problems
    assert len(problems) == len(expected), "\n".join(map(str, problems))
    for field, line, message in expected:
        assert any(matches(p, field, line, message) for p in problems), (
            f"no problem {field} @ {line}: {message!r} in:\n" + "\n".join(map(str, problems)))
    assert all(p.file == path for p in problems)
    assert info.value.path == path


def test_missing_sources_are_reported_against_the_project_root(tmp_path: Path) -> None:
    source = DATA / "missing_source.toml"
    shutil.copy(source, tmp_path / "build.toml")
    for present in ("torch-ext/torch_binding.cpp", "relu_cuda/relu.cu"):
        (tmp_path / present).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / present).write_text("// present\n")
    with pytest.raises(ManifestError) as info:
        load_manifest(tmp_path)
    problems = info.value.problems
    expected = expectations(source)
    assert len(problems) == len(expected), "\n".join(map(str, problems))
    for field, line, message in expected:
        assert any(matches(p, field, line, message) for p in problems)
    assert all(p.file == tmp_path / "build.toml" for p in problems)
    # creating the missing paths makes the same project valid
    (tmp_path / "torch-ext/torch_binding.h").write_text("")
    (tmp_path / "relu_cuda/missing.cu").write_text("")
    (tmp_path / "relu_cuda/include").mkdir()
    assert load_manifest(tmp_path).general.name == "missing-source"
    # and check_sources=False never looks at the disk
    shutil.rmtree(tmp_path / "relu_cuda")
    assert load_manifest(tmp_path, check_sources=False).kernels[0].name == "relu"


def test_a_directory_where_a_source_file_belongs_is_reported(tmp_path: Path) -> None:
    text = (DATA / "valid_tvm_ffi.toml").read_text()
    for rel in ("tvm-ffi-ext/relu_binding.cpp", "relu_cuda/relu.cu", "relu_xpu/relu.cpp"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    assert parse_manifest(text, root=tmp_path).framework.kind == "tvm-ffi"
    (tmp_path / "relu_xpu/relu.cpp").unlink()
    (tmp_path / "relu_xpu/relu.cpp").mkdir()  # a directory where a source file should be
    with pytest.raises(ManifestError) as info:
        parse_manifest(text, root=tmp_path)
    [problem] = info.value.problems
    assert (problem.field, problem.line) == ("kernel.relu_xpu.src[0]", 24)


def test_the_message_names_file_line_field_and_count() -> None:
    path = DATA / "several_problems.toml"
    with pytest.raises(ManifestError) as info:
        parse_manifest(path.read_text(), path, check_sources=False)
    text = str(info.value)
    assert text.startswith(f"{path}: 10 problems found")
    assert f"{path}:2: general.name: invalid kernel name '-relu'" in text
    assert f"{path}:18: kernel.relu.cuda-capabilities[0]:" in text
    lines = [p.line or 0 for p in info.value.problems]
    assert lines == sorted(lines), "problems are listed in file order"


@pytest.mark.parametrize(("text", "line"), [
    ('[general]\nname = "x"\nversion = 1.2.3\n', 3),
    ('[general]\nname = "x\nversion = 1\n', 2),
    ('[general]\nname = "x"\n\n[general]\n', 4),
])
def test_syntax_error_has_the_line_of_the_error(text: str, line: int) -> None:
    with pytest.raises(ManifestError) as info:
        parse_manifest(text)
    [problem] = info.value.problems
    assert problem.line == line
    assert problem.message.startswith("TOML syntax error")
    assert "(at line" not in problem.message  # the position is in .line, not repeated


def test_missing_build_toml_suggests_kernelkit_init(tmp_path: Path) -> None:
    with pytest.raises(ManifestError) as info:
        load_manifest(tmp_path)
    assert info.value.path == tmp_path / "build.toml"
    assert "kernelkit init" in str(info.value)


def test_missing_general_table() -> None:
    with pytest.raises(ManifestError) as info:
        parse_manifest('edition = 5\n\n[torch]\n')
    fields = {p.field for p in info.value.problems}
    assert "general" in fields
    assert "edition" in fields  # a top-level key that belongs in [general]


@pytest.mark.parametrize(("edition", "advice"), [(4, "have no `edition` key"), (99, "upgrade")])
def test_other_editions_are_refused(edition: int, advice: str) -> None:
    text = (DATA / "valid_img2gray.toml").read_text().replace("edition = 5",
                                                              f"edition = {edition}")
    with pytest.raises(ManifestError) as info:
        parse_manifest(text)
    [problem] = info.value.problems
    assert problem.message.startswith(f"unsupported build edition {edition};")
    assert advice in problem.message
    assert (problem.field, problem.line) == ("general.edition", 4)


def test_backend_specific_kernel_depends_do_not_exist_before_edition_5() -> None:
    text = (DATA / "v4.toml").read_text().replace(
        '[general.cuda]\n', '[general.cuda]\nkernel-depends = [{ repo-id = "a/b", version = 1 }]\n')
    with pytest.raises(ManifestError) as info:
        parse_manifest(text, check_sources=False)
    fields = [p.field for p in info.value.problems]
    assert "general.cuda.kernel-depends" in fields
    assert "general.edition" in fields  # the note suggesting `edition = 5`
