"""Upstream's noarch examples, in place: build, check, upload, load (kernelkit and upstream
``kernels``) and ``kernelkit test`` with the projects' own test suites.

The examples are upstream's, unmodified, in ``shared/upstream-examples`` next to the checkout
(or ``$KERNELKIT_UPSTREAM_EXAMPLES``); each test copies its project to ``tmp_path`` and commits
it to a fresh git repository, as a user's clone would be. Nothing here compiles.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kernelkit.artifact.metadata import Metadata
from kernelkit.errors import ExitCode
from kernelkit.variants.host import detect_system
from tests.helpers import upstream_example, upstream_examples_dir

ROOT = Path(__file__).resolve().parents[2]


EXAMPLES = upstream_examples_dir()


def example(name: str, tmp_path: Path) -> Path:
    """A committed copy of upstream example ``name`` (skip when the corpus is absent)."""
    dest = upstream_example(name, tmp_path / name)
    ident = ["-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run(["git", "init", "-q", str(dest)], check=True)
    subprocess.run(["git", "-C", str(dest), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(dest), *ident, "commit", "-qm", "import"], check=True)
    return dest


def kk(*args: str | Path, env: dict[str, str] | None = None,
       cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    base = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    for var in ("LOCAL_KERNELS", "KERNELKIT_HUB"):
        base.pop(var, None)
    return subprocess.run([sys.executable, "-m", "kernelkit", *map(str, args)],
                          capture_output=True, text=True, env={**base, **(env or {})}, cwd=cwd)


def tree_id(project: Path) -> str:
    """The build id: from the content of the sources (builder/compile/provenance.py)."""
    from kernelkit.builder.compile.provenance import build_id
    from kernelkit.manifest import load_manifest

    return build_id(load_manifest(project))


def test_relu_triton_builds_checks_and_tests(tmp_path: Path) -> None:
    project = example("relu-triton", tmp_path)
    build = kk("build", project)
    assert build.returncode == 0, build.stdout + build.stderr
    variants = ["torch-cuda", "torch-rocm", "torch-xpu"]  # general.backends, named as upstream
    assert sorted(p.name for p in (project / "build").iterdir()) == variants
    uid = tree_id(project)
    for v in variants:
        vdir = project / "build" / v
        assert sorted(p.name for p in vdir.iterdir()) == [
            "__init__.py", "_ops.py", "layers.py", "metadata.json", "op.py", "symbols.json"]
        meta = Metadata.read(vdir / "metadata.json")
        backend = v.removeprefix("torch-")
        assert (meta.name, meta.id, meta.backend) == ("relu-triton",
                                                      f"_relu_triton_{backend}_{uid}", backend)
        assert meta.digest is not None and not meta.digest.verify(vdir)
        assert f'"_relu_triton_" + _backend() + "_{uid}"' in (vdir / "_ops.py").read_text()
    check = kk("check", project, "--json")
    assert check.returncode == 0, check.stdout + check.stderr
    report = json.loads(check.stdout)
    assert report["ok"] and report["errors"] == 0 and report["variants"] == variants
    tested = kk("test", project, "--json")
    results = {r["variant"]: r for r in json.loads(tested.stdout)}
    assert tested.returncode == 0, tested.stdout + tested.stderr
    here = detect_system().backend
    for v in variants:
        if v == f"torch-{here}":  # a GPU machine with triton: the suite runs
            assert results[v]["status"] == "passed", results[v]
        else:
            assert (results[v]["status"], results[v]["who"]) == ("skipped", "machine")
            assert f"backend ({v.removeprefix('torch-')}) does not match" in results[v]["reason"]


def test_silu_and_mul_own_tests_pass_through_kernelkit_test(tmp_path: Path) -> None:
    project = example("silu-and-mul", tmp_path)
    assert kk("build", project).returncode == 0
    if detect_system().backend != "cpu":
        pytest.skip("checks the CPU variant's selection; this machine has a GPU backend")
    proc = kk("test", project, "--", "-q", "-k", "not cuda and not opcheck")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert re.search(r"^passed  torch-cpu: pytest passed$", proc.stdout, re.M)
    assert re.search(r"\d+ passed, \d+ deselected", proc.stdout)  # pytest's own report
    assert "1 passed, 0 failed, 3 skipped" in proc.stdout
    assert not list((project / "build").rglob("__pycache__"))  # build/ stays sealed

    # A wrong kernel fails its own suite: kernelkit test reports it and exits 1.
    op = project / "torch-ext" / "silu_and_mul" / "op.py"
    op.write_text(op.read_text().replace("return F.silu(x[..., :d]) * x[..., d:]",
                                         "return F.silu(x[..., :d]) * x[..., d:] + 1"))
    assert kk("build", project).returncode == 0
    bad = kk("test", project, "--variant", "torch-cpu", "--json", "--",
             "-q", "-k", "test_silu_and_mul and cpu and not layer")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    (result,) = json.loads(bad.stdout)
    assert (result["variant"], result["status"]) == ("torch-cpu", "failed")
    assert "AssertionError" in Path(result["log"]).read_text() or \
        "Mismatched elements" in Path(result["log"]).read_text()


def test_silu_and_mul_loaded_by_upstream_kernels_and_kernelkit(tmp_path: Path) -> None:
    pytest.importorskip("kernels")
    project = example("silu-and-mul", tmp_path)
    assert kk("build", project).returncode == 0
    code = (
        "import json, sys, torch, kernels\n"
        "k = kernels.get_kernel('kernels-test/silu-and-mul', version=1)\n"
        "l = kernels.get_local_kernel(__import__('pathlib').Path(sys.argv[1]))\n"
        "x = torch.randn(4, 8)\n"
        "ref = torch.nn.functional.silu(x[:, :4]) * x[:, 4:]\n"
        "print(json.dumps({'file': k.__file__, 'local': l.__file__,\n"
        "                  'ok': bool(torch.allclose(k.silu_and_mul(x), ref)),\n"
        "                  'layer': bool(torch.allclose(l.layers.SiluAndMul()(x), ref))}))\n")
    env = {**os.environ, "LOCAL_KERNELS": f"kernels-test/silu-and-mul={project}"}
    env.pop("PYTHONPATH", None)  # upstream kernels only: kernelkit is not importable here
    proc = subprocess.run([sys.executable, "-c", code, str(project / "build")], env=env,
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    expected = str(project / "build" / f"torch-{detect_system().backend}" / "__init__.py")
    assert out == {"file": expected, "local": expected, "ok": True, "layer": True}


def test_noarch_upload_then_load_from_the_hub(tmp_path: Path) -> None:
    project = example("silu-and-mul", tmp_path)
    assert kk("build", project).returncode == 0
    hub, cache = tmp_path / "hub", tmp_path / "cache"
    up = kk("upload", project, "--hub", hub)
    assert up.returncode == 0, up.stdout + up.stderr
    assert "variants: torch-cpu, torch-cuda, torch-rocm, torch-xpu" in up.stdout
    code = ("import torch, kernelkit\n"
            "k = kernelkit.get_kernel('kernels-test/silu-and-mul', version=1)\n"
            "x = torch.randn(3, 6)\n"
            "assert torch.allclose(k.silu_and_mul(x),"
            " torch.nn.functional.silu(x[:, :3]) * x[:, 3:])\n"
            "print(k.__file__)\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "KERNELKIT_HUB": str(hub),
           "KERNELKIT_CACHE": str(cache), "KERNELKIT_TRUSTED_PUBLISHERS": "kernels-test"}
    env.pop("LOCAL_KERNELS", None)
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    loaded = Path(proc.stdout.strip())
    assert loaded.is_relative_to(cache) and loaded.parent.name == \
        f"torch-{detect_system().backend}"


def test_gemm_triton_autotune_ships_its_json_configs(tmp_path: Path) -> None:
    project = example("gemm-triton-autotune", tmp_path)
    assert kk("build", project).returncode == 0
    configs = sorted(p.name for p in (project / "build" / "torch-cuda" / "configs").iterdir())
    assert configs == sorted(p.name for p in (project / "torch-ext" / "gemm_triton_autotune" /
                                              "configs").iterdir())
    assert len(configs) == 2
    assert kk("check", project).returncode == 0


def test_bad_registration_is_built_but_fails_check(tmp_path: Path) -> None:
    project = example("silu-and-mul-bad-registration", tmp_path)
    assert kk("build", project).returncode == 0
    check = kk("check", project / "build" / "torch-cpu")
    assert check.returncode == 1
    assert "does not use add_op_namespace_prefix" in check.stdout


def test_noarch_project_without_its_package_is_the_projects_fault(tmp_path: Path) -> None:
    project = example("relu-triton", tmp_path)
    shutil.rmtree(project / "torch-ext")
    proc = kk("build", project, "--json")
    assert proc.returncode == ExitCode.BUILD
    outcomes = json.loads(proc.stdout)
    assert {(o["status"], o["who"]) for o in outcomes} == {("failed", "project")}
    assert "relu_triton/__init__.py does not exist" in outcomes[0]["message"]


def test_list_variants_dry_run_and_build_agree(tmp_path: Path) -> None:
    project = example("silu-and-mul", tmp_path)
    listed = json.loads(kk("list-variants", project, "--json").stdout)
    planned = json.loads(kk("build", project, "--all", "--dry-run", "--json").stdout)
    assert [(v["variant"], v["buildable"], v["reason"], v["who"]) for v in listed] == \
        [(v["variant"], v["buildable"], v["reason"], v["who"]) for v in planned["variants"]]
    built = json.loads(kk("build", project, "--json").stdout)
    assert sorted(o["variant"] for o in built if o["status"] == "built") == \
        sorted(v["variant"] for v in listed if v["buildable"])


def test_partial_build_skips_what_it_cannot_and_strict_fails(tmp_path: Path) -> None:
    project = example("relu-torch-stable-abi", tmp_path)
    # metal is listed but has no kernel: a noarch torch-metal (no compile); rocm is compiled
    # code kernelkit does not build: skipped, the rest built, exit 0; --strict makes it fatal.
    args = ("build", project, "--backend", "metal", "--backend", "rocm")
    plain = kk(*args)
    assert plain.returncode == 0, plain.stdout + plain.stderr
    assert re.search(r"^built   torch-metal  \S+/build/torch-metal  ", plain.stdout, re.M)
    assert "skipped rocm backend: kernelkit does not support this yet: compiling rocm kernels" \
        in plain.stdout
    assert "1 built, 0 cached, 0 failed, 1 skipped" in plain.stdout
    outcomes = {o["variant"]: o for o in json.loads(kk(*args, "--json").stdout)}
    assert (outcomes["rocm backend"]["status"], outcomes["rocm backend"]["who"]) == \
        ("skipped", "unsupported")
    strict = kk(*args, "--strict")
    assert strict.returncode == ExitCode.BUILD and "--strict" in strict.stderr


def test_relu_nki_plain_build_makes_the_local_only_neuron_variant(tmp_path: Path) -> None:
    """relu-nki is noarch for neuron alone: the release matrix has no torch-neuron (as upstream),
    but a plain local build makes it with any torch, as upstream's local build does."""
    project = example("relu-nki", tmp_path)
    listed = kk("list-variants", project, "--json")
    assert listed.returncode == 0 and json.loads(listed.stdout) == []
    built = kk("build", project, "--json")
    assert built.returncode == 0, built.stdout + built.stderr
    assert [(o["variant"], o["status"]) for o in json.loads(built.stdout)] == \
        [("torch-neuron", "built")]
    meta = Metadata.from_json(json.loads(
        (project / "build" / "torch-neuron" / "metadata.json").read_text()))
    assert meta.backend == "neuron"
    assert (project / "build" / "torch-neuron" / "__init__.py").is_file()
