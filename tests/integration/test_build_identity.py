"""The build identity and the author's loop (issue 23 item 1), with real CMake/ninja/ccache
builds: an unchanged rebuild compiles nothing, with or without git; editing one kernel file
recompiles that unit and the tiny generated id unit, nothing else; two builds of different
sources load side by side in one process; the op namespace reaches no kernel unit's compile
line; provenance is right for a project nested in another repository."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kernelkit.artifact.metadata import Metadata
from kernelkit.builder.api import build
from kernelkit.builder.compile.events import BuildResult
from kernelkit.builder.compile.namespace_units import EVERY_UNIT, namespace_units
from kernelkit.builder.compile.provenance import git_state, project_git_state
from kernelkit.manifest import load_manifest
from tests.helpers import git

PYTHON = Path(sys.executable)
ID_UNIT = "cmake/kernelkit_ops_id.c"
KERNEL = "img2gray_cpu/img2gray_cpu.cpp"



def build_cpu(project: Path, out: Path | None = None) -> BuildResult:
    [result] = build(project, python=PYTHON, backends=["cpu"], out_root=out)
    return result


@pytest.fixture
def project(img2gray_project: Path, tmp_path: Path) -> Path:
    """A copy of the session's img2gray project without git, built once (the session's
    compiles are in the compiler cache, so this first build only hits it)."""
    dest = tmp_path / "img2gray"
    shutil.copytree(img2gray_project, dest,
                    ignore=shutil.ignore_patterns(".git", "build", "_cmake_build"))
    build_cpu(dest)
    return dest


@pytest.mark.slow
def test_an_unchanged_rebuild_compiles_nothing_with_or_without_git(project: Path) -> None:
    first = Metadata.read(next((project / "build").iterdir()) / "metadata.json")
    again = build_cpu(project)
    assert again.unit_times == {}  # ninja ran no compile at all
    assert again.metadata.id == first.id  # the same sources, the same namespace
    shutil.rmtree(project / "build")  # the case: rm -rf build, then build
    assert build_cpu(project).unit_times == {}
    assert first.provenance is not None and first.provenance.kernel is None  # no git: none
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "init")
    committed = build_cpu(project)
    assert committed.unit_times == {}  # a commit changes no compile line
    assert committed.metadata.id == first.id
    kernel = committed.metadata.provenance.kernel if committed.metadata.provenance else None
    assert kernel is not None and (kernel.commit, kernel.dirty) == (git(project, "rev-parse",
                                                                        "HEAD"), False)


@pytest.mark.slow
def test_editing_one_kernel_file_recompiles_that_unit_and_the_id_unit(
        project: Path, tmp_path: Path) -> None:
    before = build_cpu(project).metadata.id
    src = project / KERNEL
    src.write_text(src.read_text() + "\n// edited\n")
    edited = build_cpu(project)
    assert set(edited.unit_times) == {KERNEL, ID_UNIT}  # not the binding, not the shims
    assert edited.metadata.id != before  # other sources, another namespace
    log = edited.log_path.read_text("utf-8", "replace")
    compiles = [line for line in log.splitlines() if " -c " in line]
    assert compiles and all("TORCH_EXTENSION_NAME" not in line for line in compiles)
    assert not any("kernelkit_ops_id.h" in line for line in compiles)


@pytest.mark.slow
def test_two_builds_of_different_sources_load_in_one_process(
        project: Path, tmp_path: Path) -> None:
    old = build_cpu(project, tmp_path / "old").path
    src = project / KERNEL
    src.write_text(src.read_text() + "\n// another revision\n")
    new = build_cpu(project, tmp_path / "new").path
    code = (
        "import importlib.util, sys, torch\n"
        "def load(name, path):\n"
        "    spec = importlib.util.spec_from_file_location(name, path + '/__init__.py',\n"
        "        submodule_search_locations=[path])\n"
        "    m = importlib.util.module_from_spec(spec); sys.modules[name] = m\n"
        "    spec.loader.exec_module(m); return m\n"
        f"a = load('k_old', {str(old)!r}); b = load('k_new', {str(new)!r})\n"
        "img = torch.randint(0, 255, (4, 5, 3), dtype=torch.uint8)\n"
        "assert torch.equal(a.img2gray(img), b.img2gray(img))\n"
        "print(a.add_op_namespace_prefix('x'), b.add_op_namespace_prefix('x'))\n")
    proc = subprocess.run([str(PYTHON), "-c", code], capture_output=True, text=True, cwd="/")
    assert proc.returncode == 0, proc.stderr[-3000:]
    first, second = proc.stdout.split()
    assert first != second and first.startswith("_img2gray_cpu_")


def _project(root: Path, binding: str, header: str = "") -> Path:
    (root / "k").mkdir(parents=True)
    (root / "torch-ext" / "demo").mkdir(parents=True)
    (root / "build.toml").write_text(
        '[general]\nname = "demo"\nversion = 1\nedition = 5\nlicense = "MIT"\n'
        'backends = ["cpu"]\n\n'
        '[torch]\nsrc = ["torch-ext/b.cpp", "torch-ext/b.h"]\n\n'
        '[kernel.k]\nbackend = "cpu"\ndepends = ["torch"]\nsrc = ["k/k.cpp"]\n')
    (root / "torch-ext" / "b.cpp").write_text(binding)
    (root / "torch-ext" / "b.h").write_text(header or "#pragma once\n")
    (root / "k" / "k.cpp").write_text("int k() { return 1; }\n")
    (root / "torch-ext" / "demo" / "__init__.py").write_text("")
    return root


REGISTER = ('#include <torch/library.h>\n#include "registration.h"\n'
            "TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, ops) {}\n"
            "REGISTER_EXTENSION(TORCH_EXTENSION_NAME)\n")


@pytest.mark.parametrize(("binding", "header", "expected"), [
    (REGISTER, "", ()),  # registration.h's macros only: nothing needs the token
    ("// TORCH_EXTENSION_NAME in a comment is no use\n" + REGISTER, "", ()),
    (REGISTER + 'const char *n = STRINGIFY(TORCH_EXTENSION_NAME);\n', "",
     ("torch-ext/b.cpp",)),
    ('#include "registration.h"\nSTABLE_TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, m) {}\n', "",
     ("torch-ext/b.cpp",)),
    (REGISTER.replace('"registration.h"', '"my_macros.h"'), "", ("torch-ext/b.cpp",)),
    (REGISTER, "#define NS TORCH_EXTENSION_NAME\n", EVERY_UNIT),  # a header: every unit
])
def test_which_units_get_the_namespace(tmp_path: Path, binding: str, header: str,
                                       expected: tuple[str, ...]) -> None:
    manifest = load_manifest(_project(tmp_path / "p", binding, header))
    assert namespace_units(manifest) == expected


def test_a_registration_h_that_is_not_kernelkits_gets_the_token(tmp_path: Path) -> None:
    """upstream's (or an older kernelkit's) registration.h beside the binding expands the bare
    name: that unit must see TORCH_EXTENSION_NAME defined."""
    root = _project(tmp_path / "p", REGISTER)
    (root / "torch-ext" / "registration.h").write_text("#define TORCH_LIBRARY_EXPAND(N, M) x\n")
    assert namespace_units(load_manifest(root)) == ("torch-ext/b.cpp",)


def test_provenance_of_a_project_nested_in_another_repository(tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    outer.mkdir()
    git(outer, "init", "-q")
    (outer / "README").write_text("outer\n")
    (outer / ".gitignore").write_text("ignored/\n")
    git(outer, "add", "-A")
    git(outer, "commit", "-qm", "outer")
    # untracked, then ignored: the outer commit says nothing about the project
    untracked = _project(outer / "demo-output", REGISTER)
    assert project_git_state(load_manifest(untracked)) is None
    assert project_git_state(load_manifest(_project(outer / "ignored" / "p", REGISTER))) is None
    # tracked: the outer commit, clean; a source file added later but not committed: dirty
    git(outer, "add", "demo-output")
    git(outer, "commit", "-qm", "add the project")
    state = project_git_state(load_manifest(untracked))
    assert state is not None and state.commit == git(outer, "rev-parse", "HEAD")
    assert state.dirty is False
    (untracked / "k" / "k.cpp").write_text("int k() { return 2; }\n")
    assert project_git_state(load_manifest(untracked)).dirty is True  # type: ignore[union-attr]
    git(outer, "checkout", "-q", "--", ".")
    (untracked / "k" / "extra.h").write_text("#pragma once\n")  # not a source: still clean
    assert git_state(untracked, [untracked / "k" / "k.cpp"]).dirty is False  # type: ignore[union-attr]
    assert git_state(untracked, [untracked / "k" / "extra.h"]).dirty is True  # type: ignore[union-attr]


@pytest.mark.slow
def test_each_build_fact_is_decided_once(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 28: one build probes its torch once and reads the toolchain lock once, and its
    variant's work directory is spelled in one place."""
    from kernelkit.builder import api
    from kernelkit.builder.compile.workdirs import work_dir
    from kernelkit.builder.toolchain import environment, probe, toolchain_lock

    calls: dict[str, int] = {"probe": 0, "lock": 0}

    def counted(name: str, real):  # type: ignore[no-untyped-def]
        def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
            calls[name] += 1
            return real(*args, **kwargs)
        return wrapper

    for module in (api, environment):
        monkeypatch.setattr(module, "probe_python", counted("probe", probe.probe_python))
    monkeypatch.setattr(api, "find_toolchain_lock",
                        counted("lock", toolchain_lock.find_toolchain_lock))
    result = build_cpu(project)
    assert calls == {"probe": 1, "lock": 1}
    assert result.log_path == work_dir(project, result.variant) / "build.log"
