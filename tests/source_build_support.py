"""What the build-from-source tests share (issue 29): publishing a real build under another
torch's variant name with the project's sources, the img2gray check a fresh interpreter runs,
and the few build tools another environment's interpreter borrows from this one."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from kernelkit.artifact.sources import SourceArchive
from kernelkit.hub.local import LocalGitHub
from kernelkit.hub.port import Hub
from kernelkit.publish.upload import upload
from kernelkit.source_build.pack import pack_project

REPO = "kernelkit-examples/img2gray"
SRC = str(Path(__file__).resolve().parents[1] / "src")

#: Loads img2gray with ``kernelkit.<LOADER>`` and checks it against the reference; prints
#: ``LOADED <module file>``. ``sys.argv[1]``: the keyword arguments as JSON.
LOAD_IMG2GRAY = """
import json, logging, sys
logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(name)s: %(message)s")
import torch, kernelkit
kwargs = json.loads(sys.argv[1])
loader = getattr(kernelkit, kwargs.pop("loader", "get_kernel"))
device = kwargs.pop("device", "cpu")
try:
    k = loader("kernelkit-examples/img2gray", **kwargs)
except Exception as exc:
    print("ERROR", type(exc).__name__, str(exc).replace("\\n", " | "))
    raise SystemExit(3)
img = torch.randint(0, 256, (3, 17, 9, 3), dtype=torch.uint8,
                    generator=torch.Generator().manual_seed(0))
x = img.to(torch.float32)
ref = ((x[..., 0] * 0.299 + x[..., 1] * 0.587 + x[..., 2] * 0.114) + 0.5).to(torch.uint8)
assert torch.equal(k.img2gray(img.to(device)).cpu(), ref)
print("LOADED", k.__file__)
"""


def publish(hub_root: Path | Hub, project: Path, variant_dir: Path, *, as_variant: str,
            tmp: Path, sources: SourceArchive | None = None,
            repo_id: str = REPO) -> tuple[str, SourceArchive]:
    """Publish a copy of ``variant_dir`` named ``as_variant`` (another torch's name: the
    digest does not cover the directory name) as ``v1`` with the sources of ``project``
    (``kernelkit upload``'s own code) to a local hub at ``hub_root`` (or that hub);
    ``sources`` replaces the archive (a tampered one)."""
    build = tmp / "publish" / as_variant / "build"
    shutil.copytree(variant_dir, build / as_variant,
                    ignore=shutil.ignore_patterns("__pycache__"))
    archive = pack_project(project, tmp / "sources" / as_variant)
    assert archive is not None
    hub = LocalGitHub(hub_root) if isinstance(hub_root, Path) else hub_root
    result = upload(build.parent, hub, repo_id=repo_id, sources=sources or archive)
    assert result.sources == (sources or archive).digest, result.warnings
    return result.commit, archive


BUILD_DEPS = ("packaging", "cmake", "ninja", "elftools")


def tools_path(dest: Path, only: tuple[str, ...] = BUILD_DEPS) -> Path:
    """A directory holding (links to) this environment's kernelkit dependencies and build tools
    (packaging, cmake, ninja, pyelftools): what ``pip install 'kernelkit[build]'`` would add to
    another environment, without its torch; ``only`` some of them."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in only:
        link = dest / name
        if link.exists():
            continue
        package = _package_dir(name)  # where this interpreter imports it from (PYTHONPATH too)
        if name != "ninja":
            link.symlink_to(package)
            continue
        # the ninja wheel puts its program into the environment's bin/, which another
        # interpreter does not look in: lay it out as the package's data/bin/ninja instead
        shutil.copytree(package, link, ignore=shutil.ignore_patterns("__pycache__"))
        (link / "data" / "bin").mkdir(parents=True, exist_ok=True)
        program = Path(sysconfig.get_paths()["scripts"]) / "ninja"
        found = program if program.is_file() else shutil.which("ninja")
        assert found is not None, "no ninja program next to this interpreter or on PATH"
        (link / "data" / "bin" / "ninja").unlink(missing_ok=True)
        (link / "data" / "bin" / "ninja").symlink_to(found)
    return dest


def _package_dir(name: str) -> Path:
    import importlib.util

    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.origin is not None, f"{name} is not installed here"
    return Path(spec.origin).parent


def run_loader(python: Path | str, kwargs: str, env: dict[str, str],
               timeout: float = 900) -> subprocess.CompletedProcess[str]:
    """:data:`LOAD_IMG2GRAY` in a fresh ``python`` with ``env`` added to this one's."""
    full = {k: v for k, v in os.environ.items()
            if k not in ("KERNELKIT_OFFLINE", "HF_HUB_OFFLINE", "KERNELKIT_BUILD_MISSING")}
    full.update(env)
    return subprocess.run([str(python), "-c", LOAD_IMG2GRAY, kwargs], capture_output=True,
                          text=True, timeout=timeout, env=full)


def this_python() -> str:
    return sys.executable
