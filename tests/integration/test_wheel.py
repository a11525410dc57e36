"""``kernelkit to-wheel``: wheels that pip installs into a fresh venv and that run."""

from __future__ import annotations

import base64
import hashlib
import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from kernelkit.hub.local import LocalGitHub
from kernelkit.wheel.naming import wheel_tags
from tests.helpers import make_variant

REPO = "acme/img2gray"
ARCH = "torch213-cxx11-cpu-x86_64-linux"


def publish(hub: LocalGitHub, tmp: Path) -> str:
    build = tmp / "src" / "build"
    files: dict[str, Path] = {}
    for variant in (ARCH, "torch-universal"):
        vdir = make_variant(build, variant, name="img2gray", factor=3.0, tag="v1.2.0")
        files |= {f"build/{variant}/{p.relative_to(vdir).as_posix()}": p
                  for p in vdir.rglob("*") if p.is_file()}
    commit = hub.publish(REPO, "v1", files)
    hub.tag(REPO, "v1.2.0", commit)
    return commit


def to_wheel(hub: LocalGitHub, dest: Path, version: str) -> list[Path]:
    out = subprocess.run(
        [sys.executable, "-m", "kernelkit", "to-wheel", REPO, "--version", version,
         "--hub", str(hub.root), "--dest", str(dest)],
        check=True, capture_output=True, text=True)
    return [Path(line) for line in out.stdout.split()]


def check_record(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        record_name = next(n for n in names if n.endswith(".dist-info/RECORD"))
        rows = [r.split(",") for r in zf.read(record_name).decode().splitlines()]
        assert sorted(r[0] for r in rows) == sorted(names)
        for path, digest, size in rows:
            if path == record_name:
                assert (digest, size) == ("", "")
                continue
            data = zf.read(path)
            want = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert digest == f"sha256={want}" and int(size) == len(data)
        return names


def test_one_wheel_per_variant_with_tags_record_and_metadata(tmp_path: Path) -> None:
    hub = LocalGitHub(tmp_path / "hub")
    publish(hub, tmp_path)
    wheels = sorted(to_wheel(hub, tmp_path / "dist", ">=1.1,<2"), key=lambda p: p.name)
    assert [w.name for w in wheels] == [
        "img2gray-1.2.0+torch213cpu-cp39-abi3-manylinux_2_28_x86_64.whl",
        "img2gray-1.2.0-py3-none-any.whl",
    ]
    names = check_record(wheels[0])
    assert "img2gray/__init__.py" in names and "img2gray/_ops.py" in names
    assert not any(n.endswith(".pyc") for n in names)
    with zipfile.ZipFile(wheels[0]) as zf:
        meta = zf.read("img2gray-1.2.0+torch213cpu.dist-info/METADATA").decode()
        wheel = zf.read("img2gray-1.2.0+torch213cpu.dist-info/WHEEL").decode()
    assert "Requires-Dist: torch==2.13.*" in meta and "Version: 1.2.0+torch213cpu" in meta
    assert "Root-Is-Purelib: false" in wheel
    assert "Tag: cp39-abi3-manylinux_2_28_x86_64" in wheel
    # reproducible: the same input gives the same bytes
    again = to_wheel(hub, tmp_path / "dist2", "1")
    assert sorted(p.read_bytes() for p in again) == sorted(p.read_bytes() for p in wheels)


def test_stable_abi_and_noarch_requirements() -> None:
    assert wheel_tags("torch-stable-abi29-cu126-x86_64-linux").torch_requirement == "torch>=2.9"
    assert wheel_tags("torch-cpu").local == "cpu"
    assert wheel_tags("torch-universal").local is None


@pytest.mark.skipif(sys.platform != "linux", reason="the arch wheel is a Linux x86_64 wheel")
def test_wheel_installs_into_a_fresh_venv_and_runs(tmp_path: Path) -> None:
    """A fresh venv (no torch, no kernelkit) gets the wheel with `pip install --no-deps`; torch
    comes from the test venv's site-packages, appended after the fresh venv's own via a .pth
    file, so `import img2gray` can only resolve to the installed wheel."""
    hub = LocalGitHub(tmp_path / "hub")
    publish(hub, tmp_path)
    wheels = to_wheel(hub, tmp_path / "dist", "1")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                    "--find-links", str(tmp_path / "dist"), "img2gray==1.2.0+torch213cpu"],
                   check=True)
    site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          check=True, capture_output=True, text=True).stdout.strip()
    (Path(site) / "zz_torch_from_test_venv.pth").write_text(sysconfig.get_path("purelib") + "\n")
    code = ("import torch, img2gray; print(img2gray.__file__); "
            "print(img2gray.scale(torch.ones(3)).tolist(), img2gray.VERSION_TAG)")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    out = subprocess.run([str(py), "-c", code], check=True, capture_output=True, text=True,
                         cwd=tmp_path, env=env).stdout.split("\n")
    assert out[0].startswith(str(venv))
    assert out[1] == "[3.0, 3.0, 3.0] v1.2.0"
    assert any("torch213cpu" in w.name for w in wheels)
