"""Partial builds: every refusal says whose limitation it is; skips don't fail a build, failures
and (with --strict) skips do; a plain build plans noarch variants like the matrix does."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from kernelkit.builder.execute import Outcome, execute_plan
from kernelkit.builder.plan.plan_matrix import (
    HostFacts,
    MatrixPlan,
    PlannedBuild,
    kernelkit_refusal,
    plan_interpreter,
    plan_matrix,
    why_not_buildable,
)
from kernelkit.builder.toolchain.probe import TorchEnv
from kernelkit.cli.cmd_build import _summarize
from kernelkit.errors import ExitCode, NotBuildableError
from kernelkit.manifest import parse_manifest
from kernelkit.variants.matrix import BuildTarget, targets_for

MIXED = """
[general]
name = "mixed"
version = 1
edition = 5
license = "Apache-2.0"
backends = ["cpu", "cuda", "rocm"]

[torch]
src = ["torch-ext/torch_binding.cpp"]

[kernel.mixed_rocm]
backend = "rocm"
depends = ["torch"]
src = ["mixed_rocm/mixed.cu"]

[kernel.mixed]
backend = "cuda"
depends = ["torch"]
src = ["mixed_cuda/mixed.cu"]
"""

NOARCH = """
[general]
name = "pure-py"
version = 1
edition = 5
license = "Apache-2.0"
backends = ["cpu", "cuda", "metal"]

[torch-noarch]
"""

CPU_ENV = TorchEnv(
    python=Path("/env/bin/python"), python_version="3.11.7", python_include=Path("/inc"),
    torch_version="2.13.0+cpu", cuda=None, hip=None, cxx11_abi=True,
    cmake_prefix_path=Path("/t/share/cmake"), torch_dir=Path("/t"), site_packages=(),
    nvidia_include_dirs=(), machine="x86_64", os="linux")
HERE = HostFacts(system="x86_64-linux", cores=4)


def target(**kw: object) -> BuildTarget:
    base: dict[str, object] = {"variant": "v", "torch": "2.13", "backend": "cpu",
                               "backend_version": None, "required": True}
    base.update(kw)
    return BuildTarget(**base)  # type: ignore[arg-type]


def test_refusals_name_whose_limitation_they_are() -> None:
    rocm = why_not_buildable(target(backend="rocm", backend_version="7.1"), HERE)
    assert (rocm.buildable, rocm.who) == (False, "unsupported")
    assert "compiling rocm kernels" in rocm.reason
    other = why_not_buildable(target(system="aarch64-linux"), HERE)
    assert (other.buildable, other.who) == (False, "machine")
    assert "aarch64-linux machines only" in other.reason
    missing = why_not_buildable(target(variant="w"), dataclasses.replace(
        HERE, missing={"w": "torch==2.13.0+cpu not available"}))
    assert (missing.who, missing.reason) == ("machine", "torch==2.13.0+cpu not available")
    noarch = why_not_buildable(target(variant="torch-metal", backend="metal", kind="noarch"),
                               HERE)
    assert noarch.buildable and noarch.who is None
    assert kernelkit_refusal(target()) is None  # a cpu arch variant: kernelkit builds it


def test_plan_render_and_json_carry_who() -> None:
    manifest = parse_manifest(MIXED)
    plan = plan_matrix(manifest, HERE)
    rocm = [b for b in plan.builds if b.target.backend == "rocm"]
    assert rocm and all(b.who == "unsupported" and not b.buildable for b in rocm)
    entry = next(v for v in plan.to_json()["variants"] if v["backend"] == "rocm")
    assert entry["who"] == "unsupported"
    line = next(ln for ln in plan.render().splitlines() if rocm[0].target.variant in ln)
    assert line.startswith("  skip  ")
    assert line.endswith(": kernelkit does not support this yet: compiling rocm kernels (kernelkit "
                         "compiles cpu and cuda)")


def test_plain_build_of_noarch_project_builds_the_matrix_noarch_variants() -> None:
    manifest = parse_manifest(NOARCH)
    plan = plan_interpreter(manifest, CPU_ENV, facts=HostFacts("x86_64-linux", 2))
    matrix = [t.variant for t in targets_for(manifest, system="x86_64-linux")]
    # A CPU torch builds every noarch variant: nothing compiles. torch-metal is a darwin one.
    assert sorted(b.target.variant for b in plan.builds) == sorted(matrix)
    assert sorted(matrix) == ["torch-cpu", "torch-cuda"]
    assert all(b.buildable and b.target.kind == "noarch" for b in plan.builds)


def test_plain_build_refuses_what_this_torch_or_kernelkit_cannot_do() -> None:
    manifest = parse_manifest(MIXED)
    plan = plan_interpreter(manifest, CPU_ENV, facts=HostFacts("x86_64-linux", 2),
                            backends=["cpu", "cuda", "rocm"])
    by = {b.target.backend: b for b in plan.builds}
    assert by["cpu"].buildable and by["cpu"].target.variant == "torch-cpu"  # no cpu kernel
    assert (by["cuda"].buildable, by["cuda"].who) == (False, "machine")
    assert "has no cuda support" in by["cuda"].reason
    assert (by["rocm"].buildable, by["rocm"].who) == (False, "unsupported")


def _plan(*builds: PlannedBuild) -> MatrixPlan:
    return MatrixPlan(Path("/p"), Path("/p/build"), builds, 1, 1)


def _planned(variant: str, ok: bool = True, who: str | None = None) -> PlannedBuild:
    return PlannedBuild(target(variant=variant), ok, "r", ("kernelkit",), who=who)  # type: ignore[arg-type]


def test_refusal_while_building_is_a_skip_unless_the_project_is_wrong() -> None:
    def build_one(b: PlannedBuild, emit: object) -> Outcome:
        if b.target.variant == "machine":
            raise NotBuildableError("variant machine", "no CUDA toolkit found")
        if b.target.variant == "project":
            raise NotBuildableError("variant project", "torch-ext/x/__init__.py is missing",
                                    who="project")
        return Outcome(b.target.variant, "built")

    plan = _plan(_planned("ok"), _planned("machine"), _planned("project"),
                 _planned("refused", False, "unsupported"))
    out = {o.variant: o for o in execute_plan(plan, build_one)}
    assert out["ok"].status == "built"
    assert (out["machine"].status, out["machine"].who) == ("skipped", "machine")
    assert (out["project"].status, out["project"].who) == ("failed", "project")
    assert (out["refused"].status, out["refused"].who) == ("skipped", "unsupported")
    assert out["project"].explanation.startswith("the project is wrong: ")
    assert out["refused"].to_json()["who"] == "unsupported"


def test_not_buildable_wording_blames_the_right_party() -> None:
    assert "not buildable on this machine" in str(NotBuildableError("x", "no nvcc"))
    text = str(NotBuildableError("x", "building [tvm-ffi] kernels", who="unsupported"))
    assert "on this machine" not in text and "kernelkit does not support this yet" in text


@pytest.mark.parametrize(("statuses", "strict", "code"), [
    (("built", "skipped"), False, 0),
    (("built", "skipped"), True, ExitCode.BUILD),
    (("cached",), True, 0),
    (("built", "failed"), False, ExitCode.BUILD),
    (("skipped",), False, ExitCode.BUILD),  # nothing was built at all
])
def test_exit_status(statuses: tuple[str, ...], strict: bool, code: int,
                     capsys: pytest.CaptureFixture[str]) -> None:
    outcomes = [Outcome(f"v{i}", s, "why", who="machine" if s == "skipped" else None)  # type: ignore[arg-type]
                for i, s in enumerate(statuses)]
    assert _summarize(outcomes, False, strict) == code
    out = capsys.readouterr().out
    for i, s in enumerate(statuses):
        line = next(ln for ln in out.splitlines() if f" v{i}" in ln)
        assert line.lower().startswith(s)
    if "skipped" in statuses:
        assert "this machine lacks what it needs: why" in out


def test_a_renamed_package_directory_refuses_every_build_as_the_projects_fault(
        tmp_path: Path) -> None:
    """Without torch-ext/<python_name>/ every variant would build and only fail `check`
    (missing-init): the plan refuses it up front, naming the directory to rename."""
    from kernelkit.manifest import load_manifest

    (tmp_path / "build.toml").write_text(NOARCH)
    (tmp_path / "torch-ext" / "purepy").mkdir(parents=True)
    (tmp_path / "torch-ext" / "purepy" / "__init__.py").write_text("")
    manifest = load_manifest(tmp_path)
    plans = [plan_matrix(manifest, HERE), plan_interpreter(manifest, CPU_ENV, facts=HERE)]
    for plan in plans:
        assert plan.builds and all(b.who == "project" for b in plan.builds)
        assert all("rename torch-ext/purepy/ to torch-ext/pure_py/" in b.reason
                   for b in plan.builds)
    (tmp_path / "torch-ext" / "purepy").rename(tmp_path / "torch-ext" / "pure_py")
    assert all(b.buildable for b in plan_matrix(manifest, HERE).builds)


CUDA_80 = """
[general]
name = "caps"
version = 1
edition = 5
license = "Apache-2.0"
backends = ["cuda"]

[torch]
src = ["torch-ext/torch_binding.cpp"]

[kernel.caps]
backend = "cuda"
depends = ["torch"]
cuda-capabilities = ["8.0"]
src = ["caps_cuda/caps.cu"]
"""


def test_the_plan_judges_the_capabilities_the_build_compiles() -> None:
    """--cuda-capabilities reaches the plan (and so --dry-run and list of refusals) as it
    reaches the build: a component that keeps none of them is refused up front."""
    manifest = parse_manifest(CUDA_80)
    cuda = [b for b in plan_matrix(manifest, HERE).builds if b.target.backend == "cuda"]
    assert cuda and all(b.who != "project" for b in cuda)
    asked = plan_matrix(manifest, HERE, cuda_capabilities=["9.0"]).builds
    assert asked and all(b.who == "project" for b in asked)
    assert all("['8.0'] with ['9.0']" in b.reason for b in asked)


def test_an_environment_that_builds_another_variant_is_an_error() -> None:
    from kernelkit.builder.plan.variant_plan import plan_variant
    from kernelkit.errors import BuildError

    manifest = parse_manifest(NOARCH.replace("[torch-noarch]", '[torch]\nsrc = ["b.cpp"]'))
    plan = plan_variant(manifest, CPU_ENV, "cpu", "u", planned="torch213-cxx11-cpu-x86_64-linux")
    assert plan.variant == "torch213-cxx11-cpu-x86_64-linux"
    with pytest.raises(BuildError, match="builds torch213-cxx11-cpu-x86_64-linux instead"):
        plan_variant(manifest, CPU_ENV, "cpu", "u", planned="torch212-cxx11-cpu-x86_64-linux")
