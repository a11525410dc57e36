"""The main job, end to end: author -> build -> check -> publish -> load -> run.

``kernelkit demo`` runs it on the embedded default hub (a local directory of git
repositories): scaffold the img2gray example, build it for this Python environment, check it,
upload it as version 1 (tag v1.0.0), ``get_kernel`` it by name and version, convert a real
photograph to grayscale, verify it against a reference, and write the result as a PNG.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO_ID = "kernelkit-examples/img2gray"


@dataclass
class Step:
    name: str
    seconds: float
    detail: str


@dataclass
class DemoReport:
    steps: list[Step] = field(default_factory=list)
    output_png: Path | None = None

    @contextmanager
    def step(self, name: str, on_done: Callable[[Step], None]) -> Iterator[dict[str, str]]:
        info: dict[str, str] = {"detail": ""}
        t0 = time.perf_counter()
        yield info
        s = Step(name, time.perf_counter() - t0, info["detail"])
        self.steps.append(s)
        on_done(s)


def _photograph() -> tuple[Any, str]:
    """A real RGB photograph (H, W, 3) uint8 as a numpy array, from scikit-image's wheel."""
    from skimage import data

    # skimage.data's functions carry no annotations
    photo = data.astronaut()  # type: ignore[no-untyped-call]
    return photo, "skimage.data.astronaut (512x512 RGB photograph)"


def _commit_scaffold(project: Path) -> bool:
    """Commit the fresh scaffold so the op namespace and provenance come from a real commit."""
    import shutil

    from kernelkit.util.run import run

    if shutil.which("git") is None or not (project / ".git").is_dir():
        return False
    ident = ["-c", "user.name=kernelkit demo", "-c", "user.email=demo@kernelkit.invalid"]
    run(["git", "-C", str(project), "add", "-A"], what="git add")
    run(["git", "-C", str(project), *ident, "commit", "-q", "-m", "Scaffold img2gray"],
        what="git commit")
    return True


def _reference_gray(image: Any) -> Any:
    import torch

    x = image.to(torch.float32)
    gray = x[..., 0] * 0.299 + x[..., 1] * 0.587 + x[..., 2] * 0.114 + 0.5
    return gray.clamp(0, 255).to(torch.uint8)


def _free_tag(hub: Any, publish: Callable[[str], object]) -> str:
    """Publish as v1.0.0; where the hub already has a v1.0.0 of another build (the demo ran
    before on this hub), as the next free v1.0.N: tags never move, and ``version=1`` loads the
    newest v1 release, so a re-run loads what it just built. Returns the tag used."""
    from kernelkit.errors import HubError

    taken = hub.list_refs(REPO_ID).tags if hub.repo_exists(REPO_ID) else {}
    try:
        publish("v1.0.0")  # first run, or the same build again (a no-op)
        return "v1.0.0"
    except HubError:
        if "v1.0.0" not in taken:
            raise
    patches = [int(t.rsplit(".", 1)[1]) for t in taken if re.fullmatch(r"v1\.0\.\d+", t)]
    tag = f"v1.0.{max(patches) + 1}"
    publish(tag)
    return tag


def run_demo(
    workdir: Path,
    *,
    hub_dir: Path,
    cache_dir: Path,
    on_step: Callable[[Step], None] = lambda s: None,
    python: Path | None = None,
) -> DemoReport:
    from kernelkit.builder.api import build
    from kernelkit.check import check_build
    from kernelkit.hub.local import LocalGitHub
    from kernelkit.loader.api import get_kernel
    from kernelkit.publish.upload import upload
    from kernelkit.scaffold import init_project

    report = DemoReport()
    project = workdir / "img2gray"
    python = python or Path(sys.executable)
    with report.step("init", on_step) as s:
        if (project / "build.toml").exists():
            s["detail"] = f"reusing the project in {project}"
        else:
            files = init_project(project, name=REPO_ID, backends=["cpu", "cuda"])
            committed = _commit_scaffold(project)
            s["detail"] = f"scaffolded {len(files)} files in {project}" + (
                " (committed, so builds record the kernel's commit)" if committed else "")
    with report.step("build", on_step) as s:
        results = build(project, python=python)
        s["detail"] = ", ".join(f"{r.variant}" for r in results)
    with report.step("check", on_step) as s:
        rep = check_build(project / "build", python=python)
        errors = [f for f in rep.findings if f.severity == "error"]
        if errors:
            raise SystemExit("check failed:\n" + "\n".join(str(f) for f in errors))
        s["detail"] = f"compliant ({len(rep.findings)} notes)"
    hub = LocalGitHub(hub_dir)
    with report.step("upload", on_step) as s:
        tag = _free_tag(hub, lambda t: upload(project, hub, tag=t))
        s["detail"] = f"uploaded to {REPO_ID} (tag {tag}) in {hub_dir}"
    with report.step("get_kernel", on_step) as s:
        kernel = get_kernel(REPO_ID, version=1, trust_remote_code=True, hub=hub,
                            cache_dir=cache_dir)
        s["detail"] = f"module {kernel.__name__} from {Path(kernel.__file__ or '').parent}"
    with report.step("run", on_step) as s:
        import torch

        photo, what = _photograph()
        device = "cuda" if torch.cuda.is_available() else "cpu"
        image = torch.from_numpy(photo).to(device).contiguous()
        gray = kernel.img2gray(image)
        ref = _reference_gray(image)
        if not torch.equal(gray, ref):
            raise SystemExit("img2gray output differs from the reference implementation")
        s["detail"] = f"{what} on {device}: {tuple(gray.shape)} uint8, matches the reference"
    with report.step("write", on_step) as s:
        from PIL import Image

        out = workdir / "astronaut_gray.png"
        Image.fromarray(gray.cpu().numpy(), mode="L").save(out)
        report.output_png = out
        s["detail"] = str(out)
    return report
