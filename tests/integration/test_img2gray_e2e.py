"""The img2gray example end to end: scaffold -> build -> check -> load -> run, the project's own
tests against the build, the upstream `kernels` loader on the same tree, and the main job."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

pytestmark = pytest.mark.slow


def reference(image: torch.Tensor) -> torch.Tensor:
    x = image.to(torch.float32)
    y = x[..., 0] * 0.299 + x[..., 1] * 0.587
    y = y + x[..., 2] * 0.114
    return (y + 0.5).clamp(0, 255).to(torch.uint8)


def test_variant_name_and_layout(img2gray_cpu_build: Path) -> None:
    major, minor = torch.__version__.split(".")[:2]
    assert img2gray_cpu_build.name == f"torch{major}{minor}-cxx11-cpu-x86_64-linux"
    meta = json.loads((img2gray_cpu_build / "metadata.json").read_text())
    names = sorted(p.name for p in img2gray_cpu_build.iterdir())
    assert names == sorted(["__init__.py", "_ops.py", f"{meta['id']}.abi3.so", "metadata.json",
                            "symbols.json"])
    symbols = json.loads((img2gray_cpu_build / "symbols.json").read_text())
    assert symbols == {"schema_version": 1, "functions": [{"name": "img2gray"}], "layers": []}
    assert "symbols.json" in meta["digest"]["files"]
    assert meta["id"].startswith("_img2gray_cpu_")
    assert meta["provenance"]["kernel"]["dirty"] is False


def test_check_passes(img2gray_cpu_build: Path) -> None:
    from kernelkit.check import check_build

    report = check_build(img2gray_cpu_build.parent, python=Path(sys.executable))
    assert [f for f in report.findings if f.severity == "error"] == []


def test_matches_reference_and_rejects_bad_input(img2gray_cpu_build: Path) -> None:
    from kernelkit import get_local_kernel

    kernel = get_local_kernel(img2gray_cpu_build)
    gen = torch.Generator().manual_seed(1)
    for shape in [(1, 1, 3), (7, 13, 3), (64, 64, 3), (3, 5, 9, 3), (2, 256, 255, 3)]:
        image = torch.randint(0, 256, shape, dtype=torch.uint8, generator=gen)
        assert torch.equal(kernel.img2gray(image), reference(image)), shape
    edge = torch.tensor([[[0, 0, 0], [255, 255, 255], [255, 0, 0], [0, 0, 255]]], dtype=torch.uint8)
    assert kernel.img2gray(edge).tolist() == reference(edge).tolist() == [[0, 255, 76, 29]]
    with pytest.raises((TypeError, ValueError), match="uint8"):
        kernel.img2gray(torch.zeros(4, 4, 3, dtype=torch.float32))
    with pytest.raises(ValueError, match="3"):
        kernel.img2gray(torch.zeros(4, 4, 4, dtype=torch.uint8))
    with pytest.raises(ValueError, match="contiguous"):
        kernel.img2gray(torch.zeros(4, 8, 3, dtype=torch.uint8)[:, ::2])


def test_project_tests_pass_against_the_build(
    img2gray_project: Path, img2gray_cpu_build: Path
) -> None:
    env = dict(os.environ, KERNEL_BUILD_DIR=str(img2gray_cpu_build))
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
                          cwd=img2gray_project, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert " passed" in proc.stdout and " failed" not in proc.stdout


def test_upstream_kernels_loads_the_build(img2gray_cpu_build: Path) -> None:
    """Interoperability: the upstream `kernels` package (PyPI) loads a kernelkit build tree."""
    pytest.importorskip("kernels")
    script = textwrap.dedent(f"""
        from pathlib import Path
        import torch, kernels
        k = kernels.get_local_kernel(Path({str(img2gray_cpu_build.parent.parent)!r}))
        img = torch.randint(0, 256, (3, 31, 17, 3), dtype=torch.uint8,
                            generator=torch.Generator().manual_seed(0))
        x = img.to(torch.float32)
        ref = ((x[..., 0] * 0.299 + x[..., 1] * 0.587 + x[..., 2] * 0.114) + 0.5).to(torch.uint8)
        out = k.img2gray(img)
        assert torch.equal(out, ref)
        print("UPSTREAM-OK", k.__name__)
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "UPSTREAM-OK _img2gray_cpu_" in proc.stdout


def test_main_job_demo(tmp_path: Path) -> None:
    """README command 1's main job: init -> build -> check -> upload -> get_kernel -> PNG."""
    np = pytest.importorskip("numpy")
    Image = pytest.importorskip("PIL.Image")
    data = pytest.importorskip("skimage.data")
    exe = Path(sys.executable).with_name("kernelkit")
    proc = subprocess.run(
        [str(exe), "demo", "--workdir", str(tmp_path / "w"), "--hub", str(tmp_path / "hub"),
         "--cache", str(tmp_path / "cache")],
        capture_output=True, text=True, timeout=900,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for step in ("init", "build", "check", "upload", "get_kernel", "run", "write", "total"):
        assert f"] {step}" in proc.stdout
    out = np.asarray(Image.open(tmp_path / "w" / "astronaut_gray.png"))
    expected = reference(torch.from_numpy(data.astronaut())).numpy()
    assert out.shape == (512, 512) and (out == expected).all()
    assert (tmp_path / "hub" / "kernelkit-examples" / "img2gray.git").is_dir()
    # Run again from another place on the same hub (a second clone): v1.0.0 is the first
    # build's and tags never move, so this one is published as v1.0.1 and loaded.
    again = subprocess.run(
        [str(exe), "demo", "--workdir", str(tmp_path / "w2"), "--hub", str(tmp_path / "hub"),
         "--cache", str(tmp_path / "cache")],
        capture_output=True, text=True, timeout=900,
    )
    assert again.returncode == 0, again.stdout + again.stderr
    assert "(tag v1.0.1)" in again.stdout


def test_rebuild_elsewhere_is_bit_identical(
    img2gray_project: Path, img2gray_cpu_build: Path, tmp_path: Path
) -> None:
    """Same commit + same toolchain -> the same files (digests), wherever the project lives:
    absolute paths are mapped away (-ffile-prefix-map) and the op namespace comes from the
    content of the sources. What legitimately differs: nothing."""
    import shutil

    from kernelkit.builder.api import build

    copy = tmp_path / "elsewhere" / "img2gray"
    shutil.copytree(img2gray_project, copy, ignore=shutil.ignore_patterns("build"))
    [result] = build(copy, python=Path(sys.executable), backends=["cpu"])
    first = json.loads((img2gray_cpu_build / "metadata.json").read_text())
    second = json.loads((result.path / "metadata.json").read_text())
    assert second["digest"] == first["digest"]
    assert second["provenance"] == first["provenance"]


@pytest.mark.cuda_build
def test_cuda_variant_builds_and_checks(
    img2gray_project: Path, img2gray_cpu_build: Path, cuda_torch_python: Path, tmp_path: Path
) -> None:
    """Issue 2's acceptance: init, build for both environments (torch 2.13.0 CPU here, torch
    2.14.1+cu130 in its pinned env, compiled for sm_90 to keep CI short), check both."""
    import shutil

    from kernelkit.builder.api import build
    from kernelkit.check import check_build

    project = tmp_path / "img2gray"
    shutil.copytree(img2gray_project, project, ignore=shutil.ignore_patterns("build"))
    shutil.copytree(img2gray_cpu_build, project / "build" / img2gray_cpu_build.name)
    [cuda] = build(project, python=cuda_torch_python, backends=["cuda"], cuda_capabilities=["9.0"])
    assert cuda.variant == "torch214-cxx11-cu130-x86_64-linux"
    meta = json.loads((cuda.path / "metadata.json").read_text())
    assert meta["backend"] == {"type": "cuda", "archs": ["9.0"]}
    report = check_build(project / "build", python=Path(sys.executable),
                         variant_pythons={cuda.variant: cuda_torch_python})
    assert sorted(report.variants) == sorted([img2gray_cpu_build.name, cuda.variant])
    assert [f for f in report.findings if f.severity == "error"] == []
