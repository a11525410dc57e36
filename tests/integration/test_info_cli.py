"""``kernelkit info --dep-tree``: a kernel's kernel dependencies, transitively, resolved on a
real local git hub (nothing downloaded); compared with upstream ``kernels info`` 0.19.1 over a
real ``kernelkit serve``."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from kernelkit.errors import ExitCode
from kernelkit.hub.local import LocalGitHub
from kernelkit.variants.host import detect_system
from tests.helpers import make_variant, publish_build, run_cli
from tests.upstream_run import require_upstream

HOST = detect_system().arch_variant() or "torch-cpu"


def publish(hub: LocalGitHub, tmp: Path, repo_id: str, deps: tuple[dict[str, Any], ...] = (),
            python: tuple[str, ...] = (), branch: str = "v1") -> str:
    build = tmp / f"build-{uuid.uuid4().hex[:8]}"
    make_variant(build, HOST, uid=uuid.uuid4().hex[:7], name=repo_id.split("/")[1],
                 kernel_depends=deps, python_depends=python, kernels_minver=(0, 19, 0))
    return publish_build(hub, repo_id, branch, build)


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Any]:
    """acme/top -> acme/base (version 1) -> acme/leaf (revision main); top -> acme/util."""
    hub = LocalGitHub(tmp_path / "hub")
    leaf = publish(hub, tmp_path, "acme/leaf", python=("einops",), branch="main")
    base = publish(hub, tmp_path, "acme/base", ({"repo-id": "acme/leaf", "revision": "main"},))
    util = publish(hub, tmp_path, "acme/util")
    top = publish(hub, tmp_path, "acme/top", ({"repo-id": "acme/util", "version": 1},
                                              {"repo-id": "acme/base", "version": 1}))
    return {"hub": hub, "tmp": tmp_path, "leaf": leaf, "base": base, "util": util, "top": top}


def test_dep_tree_json_and_human(tree: dict[str, Any]) -> None:
    hub = str(tree["hub"].root)
    out = run_cli("info", "acme/top", "--dep-tree", "--json", "--hub", hub)
    assert out.returncode == 0, out.stderr
    info = json.loads(out.stdout)
    assert info["dependency_tree"] == {"acme/base": {"acme/leaf": {}}, "acme/util": {}}
    assert info["kernel_depends"] == ["acme/base", "acme/leaf", "acme/util"]
    assert info["python_depends"] == ["einops"]  # of the whole tree, as upstream
    assert (info["variant"], info["kernels_minver"]) == (HOST, "0.19.0")

    out = run_cli("info", "acme/top", "--dep-tree", "--hub", hub)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "Kernel dependencies:\nacme/top\n|-- acme/base\n|   `-- acme/leaf\n`-- acme/util\n" \
        in text
    assert "Minimum kernels version: 0.19.0" in text
    out = run_cli("info", "acme/top", "--hub", hub)
    assert "Kernel dependencies: acme/base, acme/leaf, acme/util" in out.stdout
    assert "dependency_tree" not in json.loads(run_cli("info", "acme/top", "--json", "--hub",
                                                       hub).stdout)


def test_a_local_build_resolves_its_dependencies_on_the_hub(tree: dict[str, Any]) -> None:
    local = tree["tmp"] / "local"
    make_variant(local / "build", HOST, name="mine",
                 kernel_depends=({"repo-id": "acme/base", "version": 1},))
    out = run_cli("info", str(local), "--dep-tree", "--json", "--hub", str(tree["hub"].root))
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["dependency_tree"] == {"acme/base": {"acme/leaf": {}}}


def test_a_dependency_cycle_or_a_missing_dependency_is_an_error(tree: dict[str, Any]) -> None:
    hub, tmp = tree["hub"], tree["tmp"]
    publish(hub, tmp, "acme/ping", ({"repo-id": "acme/pong", "version": 1},))
    publish(hub, tmp, "acme/pong", ({"repo-id": "acme/ping", "version": 1},))
    out = run_cli("info", "acme/ping", "--dep-tree", "--hub", str(hub.root))
    assert out.returncode == ExitCode.ERROR
    assert ("Cyclic kernel dependency detected: acme/ping "
            "(acme/ping -> acme/pong -> acme/ping)") in out.stderr
    publish(hub, tmp, "acme/orphan", ({"repo-id": "acme/gone", "version": 1},))
    out = run_cli("info", "acme/orphan", "--hub", str(hub.root))
    assert out.returncode != 0 and "acme/gone" in out.stderr and "Traceback" not in out.stderr


UPSTREAM_INFO = r"""
import contextlib, io, json, sys
from kernels._internals.cli import main
sys.argv = ["kernels", "info", "acme/top", "--revision", sys.argv[1], "--dep-tree", "--json"]
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    main()
print(json.dumps(json.loads(buf.getvalue())))
"""


def test_dep_tree_matches_upstream(tmp_path: Path) -> None:
    """Dependencies pinned by commit (the revision form kernelkit serve answers today) so
    upstream resolves the whole tree through the server."""
    require_upstream()
    from tests.hubserver import run_server

    hub = LocalGitHub(tmp_path / "hub")
    leaf = publish(hub, tmp_path, "acme/leaf", python=("einops",), branch="main")
    base = publish(hub, tmp_path, "acme/base", ({"repo-id": "acme/leaf", "revision": leaf},))
    util = publish(hub, tmp_path, "acme/util")
    top = publish(hub, tmp_path, "acme/top", ({"repo-id": "acme/util", "revision": util},
                                              {"repo-id": "acme/base", "revision": base}))
    ours = json.loads(run_cli("info", "acme/top", "--revision", top, "--dep-tree", "--json",
                              "--hub", str(hub.root)).stdout)
    with run_server(tmp_path / "hub", tmp_path) as srv:
        proc = subprocess.run([sys.executable, "-c", UPSTREAM_INFO, top], capture_output=True,
                              text=True, timeout=300, env=srv.env(HF_HOME=str(tmp_path / "hf")))
    assert proc.returncode == 0, proc.stderr[-3000:]
    theirs = json.loads(proc.stdout.strip().splitlines()[-1])
    keys = ("repo_id", "revision", "variant", "name", "version", "kernels_minver", "license",
            "upstream", "source", "python_depends", "kernel_depends", "dependency_tree",
            "backends")
    assert {k: ours[k] for k in keys} == {k: theirs[k] for k in keys}
    assert sorted(theirs) == sorted(keys)  # upstream's keys: kernelkit shows all of them
