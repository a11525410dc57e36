"""Loader behaviour across fresh processes: light import, warm pinned loads that never construct
a hub, corruption found on a fresh load, and N concurrent processes downloading once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")

from kernelkit.hub.local import LocalGitHub
from kernelkit.loader.cache import RepoCache
from kernelkit.variants.host import detect_system
from tests.helpers import build_files, make_variant

REPO = "kernels-community/demo"
SRC = str(Path(__file__).resolve().parents[2] / "src")

COUNTING_HUB = '''
class CountingHub:
    def __init__(self, inner):
        self.inner, self.calls = inner, []
    def __getattr__(self, name):
        attr = getattr(self.inner, name)
        def call(*a, **k):
            self.calls.append(name)
            return attr(*a, **k)
        return call if callable(attr) else attr
'''


HOST = detect_system().arch_variant() or "torch-cpu"


def run_py(code: str, env: dict[str, str], timeout: float = 120) -> str:
    full_env = {k: v for k, v in os.environ.items()
                if k not in ("LOCAL_KERNELS", "KERNELKIT_OFFLINE", "HF_HUB_OFFLINE")}
    full_env.update(env)
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                         text=True, timeout=timeout, env=full_env)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


@pytest.fixture
def published(tmp_path: Path) -> dict[str, Any]:
    hub = LocalGitHub(tmp_path / "hub")
    build = tmp_path / "build"
    make_variant(build, HOST, uid=uuid.uuid4().hex[:7], factor=2.0)
    files = build_files(build)
    commit = hub.publish(REPO, "v1", files)
    env = {"KERNELKIT_CACHE": str(tmp_path / "cache"), "KERNELKIT_HUB": str(tmp_path / "hub")}
    return {"hub": hub, "commit": commit, "env": env, "cache": tmp_path / "cache"}


@pytest.mark.parametrize("module", [
    "kernelkit", "kernelkit.loader.api", "kernelkit.variants.choose"])
def test_import_is_light(module: str) -> None:
    out = run_py(f"""
        import sys, {module}
        print(sorted(m for m in ("torch", "huggingface_hub", "numpy") if m in sys.modules))
    """, {})
    assert out.strip() == "[]"


def test_warm_pinned_load_in_fresh_process_constructs_no_hub(published: dict[str, Any]) -> None:
    env, commit = published["env"], published["commit"]
    run_py(f"import kernelkit; kernelkit.get_kernel({REPO!r}, revision={commit!r})", env)
    out = run_py(f"""
        import sys, torch, kernelkit
        k = kernelkit.get_kernel({REPO!r}, revision={commit!r})
        print(k.scale(torch.ones(2)).tolist())
        print(sorted(m for m in sys.modules
                     if m.startswith("kernelkit.hub.")
                     and m not in ("kernelkit.hub.port", "kernelkit.hub.hubid")))
    """, env)
    lines = out.splitlines()
    assert lines[0] == "[2.0, 2.0]"
    assert lines[1] == "[]"  # open_hub was never called: no backend module imported (the
    # hub's identity, which keys the cache folder, comes from the settings: kernelkit.hub.hubid)
    out = run_py(COUNTING_HUB + textwrap.dedent(f"""
        import kernelkit
        from kernelkit.hub.local import LocalGitHub
        hub = CountingHub(LocalGitHub({str(published["hub"].root)!r}))
        kernelkit.get_kernel({REPO!r}, revision={commit!r}, hub=hub)
        print(hub.calls)
    """), env)
    assert out.strip() == "[]"


def test_corruption_found_by_fresh_process_is_repaired(published: dict[str, Any]) -> None:
    env, commit = published["env"], published["commit"]
    run_py(f"import kernelkit; kernelkit.install_kernel({REPO!r}, revision={commit!r})", env)
    rc = RepoCache.of(published["cache"], REPO, published["hub"].hub_identity)
    init = rc.variant_dir(commit, HOST) / "__init__.py"
    st = init.stat()
    good = init.read_bytes()
    with open(init, "r+b") as fh:
        fh.write(good.replace(b"x * 2.0", b"x * 9.0"))
    os.utime(init, ns=(st.st_atime_ns, st.st_mtime_ns))
    out = run_py(f"""
        import torch, kernelkit
        k = kernelkit.get_kernel({REPO!r}, revision={commit!r})
        print(k.scale(torch.ones(1)).tolist())
    """, env)
    assert out.strip() == "[2.0]"  # the corrupt copy was replaced, never imported
    assert init.read_bytes() == good


def test_concurrent_processes_download_once(published: dict[str, Any], tmp_path: Path) -> None:
    env, commit = published["env"], published["commit"]
    n = 3
    code = COUNTING_HUB + textwrap.dedent(f"""
        import json, os, sys, time
        from kernelkit.loader import api
        from kernelkit.hub.local import LocalGitHub
        from kernelkit.variants.host import detect_system
        detect_system()  # import torch before the barrier
        hub = CountingHub(LocalGitHub({str(published["hub"].root)!r}))
        open(os.path.join({str(tmp_path)!r}, "ready-" + sys.argv[1]), "w").close()
        while len([f for f in os.listdir({str(tmp_path)!r}) if f.startswith("ready-")]) < {n}:
            time.sleep(0.01)
        path = api.install_kernel({REPO!r}, revision={commit!r}, hub=hub)
        print(json.dumps({{"fetch": hub.calls.count("fetch"), "path": str(path)}}))
    """)
    full_env = {**os.environ, **env}
    procs = [subprocess.Popen([sys.executable, "-c", code, str(i)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=full_env) for i in range(n)]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=180)
        assert p.returncode == 0, err
        results.append(json.loads(out))
    assert sum(r["fetch"] for r in results) == 1
    assert len({r["path"] for r in results}) == 1
