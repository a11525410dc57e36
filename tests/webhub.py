"""A hub directory for the web-page tests (``kernelkit serve``'s pages): real repositories
written by kernelkit's own upload, real benchmark results from ``kernelkit benchmark --save``,
and a repository whose every field a publisher controls is hostile.

    acme/scale               v1 (tags v1.0.0, v1.1.0), v2 (v2.0.0): a card, benchmarks with
                             charts (v2), one synthetic CPU variant each
    kernels-community/relu   a trusted publisher; variants named for several systems
    acme/evil                a card, commit message, file and variant names, benchmark JSON and
                             SVG written to attack the page
    team/secret              private
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from kernelkit.hub.local import LocalGitHub
from kernelkit.publish.upload import upload
from kernelkit.serve.store import SETTINGS_FILE
from tests.helpers import make_bench_project, make_variant

ROOT = Path(__file__).resolve().parents[1]

SCALE_CARD = """---
license: apache-2.0
tags: [kernel]
---
# scale

A synthetic **scale** kernel: `scale(x) = x * 2`, registered as a torch op. It exists to
show what a kernel page looks like.

## Usage

```python
import kernelkit
kernel = kernelkit.get_kernel("{{ repo_id }}", version={{ version }}, trust_remote_code=True)
kernel.scale(torch.ones(4))
```

| shape | dtype | notes |
|---|---|---|
| any | float32 | ~~slow~~ fast path |

See [the benchmark script](benchmarks/benchmark_scale.py) and
[kernelkit](https://example.org/kernelkit).
"""

HOSTILE_CARD = """# Evil <script>alert("card")</script>

<img src=x onerror=alert("img")>

<script>document.title = "pwned"</script>

[click me](javascript:alert("link")) [data](data:text/html,<script>alert(1)</script>)
[ok](https://example.org/ "title\\"><script>alert(2)</script>")
![pixel](https://tracker.example/pixel.png) ![up](../../../../etc/passwd)

<div style="position:fixed">overlay</div> &lt;b&gt;entity&lt;/b&gt;
"""

HOSTILE_SVG = """<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10">
<script>fetch("/kernels/team/secret").then(r => r.text()).then(t => alert(t))</script>
<rect width="10" height="10" fill="red"/></svg>
"""

EVIL_TEXT = '<script>alert("x")</script>"\'><img src=x onerror=alert(1)>'

SCALE_BENCH_FAST = ["--min-time", "0.02", "--max-time", "0.3", "--no-compile", "--no-roofline"]


class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, attrs))


ACTIVE_TAGS = {"script", "iframe", "object", "embed", "style", "base", "meta", "link", "svg",
               "math", "frame", "form", "input", "button", "select", "option", "textarea",
               "label"}
PAGE_TAGS = {"meta", "link", "form", "input", "button", "select", "option", "label"}


def assert_inert(html: str, *, allowed: set[str] = PAGE_TAGS) -> list[tuple[str, str]]:
    """Parse ``html`` as a browser would: no script or other active element beyond the page's
    own (``allowed``), no event-handler attribute, no ``javascript:``/``data:`` URL. Returns
    every (tag, url) for further checks."""
    parser = _Elements()
    parser.feed(html)
    parser.close()
    urls = []
    for tag, attrs in parser.found:
        assert tag not in ACTIVE_TAGS - allowed, (tag, attrs)
        for name, value in attrs:
            assert not name.startswith("on"), (tag, name, value)
            if name in ("href", "src", "srcset", "action", "formaction") and value:
                assert not value.strip().lower().startswith(("javascript:", "data:",
                                                               "vbscript:")), (tag, value)
                urls.append((tag, value))
    return urls


@dataclass(frozen=True)
class DemoHub:
    root: Path
    scale_v2: str  # commit of acme/scale v2
    evil_v1: str


def build_demo_hub(tmp: Path) -> DemoHub:
    hub_dir = tmp / "hub"
    hub = LocalGitHub(hub_dir)
    _scale(tmp, hub)
    _relu(tmp, hub)
    _evil(tmp, hub)
    secret = tmp / "secret"
    make_variant(secret / "build", "torch-cpu", name="secret")
    (secret / "build" / "CARD.md").write_text("# secret\n\nA private kernel: only signed-in "
                                              "readers.\n")
    upload(secret, hub, repo_id="team/secret")
    (hub.repo_path("team/secret") / SETTINGS_FILE).write_text(json.dumps({"private": True}))
    refs = hub.list_refs
    return DemoHub(hub_dir, refs("acme/scale").branches["v2"], refs("acme/evil").branches["v1"])


def _scale(tmp: Path, hub: LocalGitHub) -> None:
    v1 = make_bench_project(tmp / "scale-v1", uid="v1first")
    (v1 / "CARD.md").write_text(SCALE_CARD)
    upload(v1, hub, tag="v1.0.0", message="First release of scale")
    make_bench_project(v1, uid="v1second")
    upload(v1, hub, tag="v1.1.0", message="Rebuild scale with the new toolchain")
    v2 = make_bench_project(tmp / "scale-v2", uid="v2first")
    (v2 / "build.toml").write_text((v2 / "build.toml").read_text().replace("version = 1",
                                                                           "version = 2"))
    make_variant(v2 / "build", "torch-cpu", name="scale", uid="v2first", version=2)
    (v2 / "CARD.md").write_text(SCALE_CARD)
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"}
    subprocess.run([sys.executable, "-m", "kernelkit", "benchmark", str(v2), *SCALE_BENCH_FAST,
                    "--save"], env=env, check=True, capture_output=True, timeout=300)
    upload(v2, hub, tag="v2.0.0", message="scale 2: a faster scale")


RELU_VARIANTS = ("torch213-cxx11-cpu-x86_64-linux", "torch213-cxx11-cu130-x86_64-linux",
                 "torch212-cxx11-cu126-x86_64-linux", "torch-stable-abi211-cu128-aarch64-linux",
                 "torch-metal", "torch-universal")


def _relu(tmp: Path, hub: LocalGitHub) -> None:
    project = tmp / "relu"
    for name in RELU_VARIANTS:
        make_variant(project / "build", name, name="relu")
    (project / "build" / "CARD.md").write_text("# relu\n\nThe ReLU activation for every "
                                               "backend this hub builds, from the kernels "
                                               "community.\n")
    upload(project, hub, repo_id="kernels-community/relu", tag="v1.0.0")


def _evil(tmp: Path, hub: LocalGitHub) -> None:
    project = tmp / "evil"
    make_variant(project / "build", "torch-cpu", name="evil")
    (project / "build" / "CARD.md").write_text(HOSTILE_CARD)
    upload(project, hub, repo_id="acme/evil", message=f"Update {EVIL_TEXT}")
    files = tmp / "evil-files"
    files.mkdir()
    result = {"schema": "kernelkit.benchmark/1", "created": EVIL_TEXT,
              "machine": {"device": {"name": EVIL_TEXT}, "torch": EVIL_TEXT},
              "cases": [{"name": EVIL_TEXT, "status": EVIL_TEXT,
                         "series": {"kernel": {"stats": {"median_ms": "<b>1</b>"}}},
                         "speedups": {EVIL_TEXT: {"value": 2.0, "ci_low": "x",
                                                  "verdict": EVIL_TEXT}}}]}
    (files / "benchmark.json").write_text(json.dumps(result))
    (files / "chart.svg").write_text(HOSTILE_SVG)
    (files / "f.py").write_text("x = 1\n")
    results = "benchmarks/results/torch-cpu"
    hub.publish("acme/evil", "v1", {
        f"{results}/benchmark.json": files / "benchmark.json",
        f"{results}/benchmark-bars-light.svg": files / "chart.svg",
        f"build/{EVIL_TEXT.replace('/', '')}/__init__.py": files / "f.py",
    }, message=f"{EVIL_TEXT}\n\nbody")
