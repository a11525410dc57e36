"""``kernelkit versions`` and ``kernelkit info`` on a real local git hub."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from kernelkit.hub.local import LocalGitHub
from tests.helpers import make_variant

REPO = "acme/infodemo"


def publish(tmp: Path) -> tuple[LocalGitHub, str]:
    hub = LocalGitHub(tmp / "hub")
    vdir = make_variant(tmp / "src" / "build", "torch-cpu", name="infodemo")
    gpu = make_variant(tmp / "src" / "build", "torch214-cxx11-cu130-x86_64-linux", name="infodemo")
    files = {f"build/{d.name}/{p.relative_to(d).as_posix()}": p
             for d in (vdir, gpu) for p in d.rglob("*") if p.is_file()}
    commit = hub.publish(REPO, "v1", files)
    hub.tag(REPO, "v1.0.0", commit)
    return hub, commit


def kk(*args: str) -> str:
    out = subprocess.run([sys.executable, "-m", "kernelkit", *args], capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_versions_is_deprecated_for_variants_all_versions(tmp_path: Path) -> None:
    hub, commit = publish(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "kernelkit", "versions", REPO, "--hub",
                           str(hub.root)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "`kernelkit versions` is deprecated" in proc.stderr
    assert "use `kernelkit variants --all-versions`" in proc.stderr
    assert proc.stdout == kk("variants", REPO, "--all-versions", "--hub", str(hub.root))
    assert f"Version 1 ({commit[:12]}):" in proc.stdout and "torch-cpu compatible" in proc.stdout
    assert "torch214-cxx11-cu130-x86_64-linux: " in proc.stdout  # rejected, with a reason
    as_json = json.loads(kk("versions", REPO, "--json", "--hub", str(hub.root)))
    assert [r["revision"] for r in as_json["revisions"]] == ["v1"]


def test_info_json_and_human(tmp_path: Path) -> None:
    hub, commit = publish(tmp_path)
    info = json.loads(kk("info", REPO, "--version", "~=1.0", "--json", "--hub", str(hub.root)))
    assert (info["revision"], info["commit"], info["name"]) == ("v1.0.0", commit, "infodemo")
    assert info["backends"] == ["cpu", "cuda"] and info["license"] == "Apache-2.0"
    assert info["variants"] == ["torch-cpu", "torch214-cxx11-cu130-x86_64-linux"]
    assert info["digest"]["algorithm"] == "sha256"
    human = kk("info", REPO, "--hub", str(hub.root))
    assert "Revision: v1" in human and "Name: infodemo" in human and "Backends: cpu, cuda" in human
    local = json.loads(kk("info", str(tmp_path / "src"), "--json"))
    assert local["path"] == str(tmp_path / "src") and local["name"] == "infodemo"
