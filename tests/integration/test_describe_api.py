"""``kernelkit describe-api``: functions and layers from symbols.json, for a local build or a hub
repository, without importing the kernel."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from kernelkit.artifact.layout import seal_variant
from kernelkit.artifact.metadata import Metadata
from kernelkit.hub.local import LocalGitHub
from kernelkit.variants.host import detect_system
from tests.helpers import build_files, make_variant

HOST = str(detect_system().arch_variant())
REPO = "acme/described"

# Importing this kernel fails loudly: describe-api must never execute it.
NO_IMPORT = "raise RuntimeError('the kernel was imported')\n"
LAYERS = ("import torch\n\n\nclass Scale(torch.nn.Module):\n    has_backward = False\n"
          "    can_torch_compile = True\n\n    def forward(self, x):\n        return x\n")


def kernelkit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kernelkit", *args], capture_output=True,
                          text=True, timeout=120, env=dict(os.environ))


def variant(build: Path, name: str, *, uid: str, functions: tuple[str, ...]) -> Path:
    """A sealed variant exporting ``functions`` and a ``Scale`` layer, whose import raises."""
    vdir = make_variant(build, name, uid=uid)
    defs = "".join(f"def {f}(x):\n    return x\n\n\n" for f in functions)
    (vdir / "__init__.py").write_text(NO_IMPORT + defs + f"__all__ = {list(functions)!r}\n")
    (vdir / "layers.py").write_text(LAYERS)
    seal_variant(vdir, Metadata.read(vdir / "metadata.json"))
    return vdir


def test_local_build_human_and_json(tmp_path: Path) -> None:
    build = tmp_path / "proj" / "build"
    variant(build, HOST, uid="da1a001", functions=("scale", "shift"))
    out = kernelkit("describe-api", str(tmp_path / "proj"))
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        f"Path: {tmp_path / 'proj'}", f"Variant: {HOST}", "", "Functions:", "  scale",
        "  shift", "", "Layers:", "  Scale  has_backward=False  can_torch_compile=True"]
    data = json.loads(kernelkit("describe-api", str(build), "--json").stdout)
    assert data["functions"] == [{"name": "scale"}, {"name": "shift"}]
    assert data["layers"] == [{"name": "Scale", "attributes": {
        "has_backward": False, "can_torch_compile": True}}]
    assert data["variant"] == HOST and data["schema_version"] == 1


def test_hub_newest_version_by_default_and_pinned_ones(tmp_path: Path) -> None:
    hub = LocalGitHub(tmp_path / "hub")
    commits = {}
    for major, functions in ((1, ("scale",)), (2, ("scale", "scale_v2"))):
        build = tmp_path / f"v{major}" / "build"
        variant(build, HOST, uid=f"da1a00{major}", functions=functions)
        files = build_files(build)
        commits[major] = hub.publish(REPO, f"v{major}", files)
    latest = json.loads(kernelkit("describe-api", REPO, "--hub", str(hub.root), "--json").stdout)
    assert [f["name"] for f in latest["functions"]] == ["scale", "scale_v2"]
    assert (latest["revision"], latest["commit"]) == ("v2", commits[2])
    one = kernelkit("describe-api", REPO, "--hub", str(hub.root), "--version", "1")
    assert one.returncode == 0, one.stderr
    assert f"Revision: v1 ({commits[1]})" in one.stdout and "scale_v2" not in one.stdout
    pinned = json.loads(kernelkit("describe-api", REPO, "--hub", str(hub.root), "--revision",
                                  commits[1], "--json").stdout)
    assert pinned["functions"] == [{"name": "scale"}]
    # nothing was downloaded into the cache: only two files were read from the hub
    cache = Path(os.environ["KERNELKIT_CACHE"])
    assert not list(cache.rglob("__init__.py"))


def test_symbols_not_matching_the_digest_and_missing_ones(tmp_path: Path) -> None:
    build = tmp_path / "p" / "build"
    vdir = variant(build, HOST, uid="da1a003", functions=("scale",))
    (vdir / "symbols.json").write_text(json.dumps(
        {"schema_version": 1, "functions": [{"name": "evil"}], "layers": []}))
    out = kernelkit("describe-api", str(vdir))
    assert out.returncode == 4 and "symbols.json does not match the variant's digest" in \
        out.stderr, out.stderr
    (vdir / "symbols.json").unlink()
    out = kernelkit("describe-api", str(vdir))
    assert out.returncode == 8 and "invalid symbols.json: not found" in out.stderr, out.stderr
    assert "Traceback" not in out.stderr
