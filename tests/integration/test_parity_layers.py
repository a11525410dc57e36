"""The layers API as upstream ``kernels`` 0.19.1 behaves: ``kernelize``'s decision in every
mode (a layer without backward in ``Mode.TRAINING`` keeps its original forward),
``KernelizeFallback``, ``get_kernelized_layers``, the function repositories and
``use_kernel_func_from_hub``, picklable locked repositories, ``repos_for_device``.

One driver script runs the same calls against ``kernelkit`` and against upstream ``kernels``,
each in a fresh interpreter, on the same real kernel build (tests/helpers.py
``make_layers_variant``); the two reports must be equal.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from kernelkit.layers import (  # noqa: E402
    Device,
    KernelizeFallback,
    LayerRepository,
    LockedFuncRepository,
    LockedLayerRepository,
    Mode,
    use_kernel_mapping,
)
from kernelkit.layers.mapping import current_mapping  # noqa: E402
from kernelkit.variants.host import detect_system  # noqa: E402
from tests.helpers import build_files, make_layers_variant  # noqa: E402
from tests.upstream_run import require_upstream  # noqa: E402

HOST = detect_system().arch_variant() or "torch-cpu"

DRIVER = r'''
import importlib, json, logging, sys
from pathlib import Path
import torch
from torch import nn
import torch.nn.functional as F

lib = importlib.import_module(sys.argv[1])
kernel = Path(sys.argv[2])
missing = Path(sys.argv[3])
logging.disable(logging.CRITICAL)
M = lib.Mode
MODES = {"INFERENCE": M.INFERENCE, "TRAINING": M.TRAINING,
         "INFERENCE|TORCH_COMPILE": M.INFERENCE | M.TORCH_COMPILE,
         "TRAINING|TORCH_COMPILE": M.TRAINING | M.TORCH_COMPILE}
REGISTERED = {"FALLBACK": M.FALLBACK, "INFERENCE": M.INFERENCE, "TRAINING": M.TRAINING,
              "TRAINING|TORCH_COMPILE": M.TRAINING | M.TORCH_COMPILE}


def category(exc):
    for cls in (FileNotFoundError, TypeError, ValueError, RuntimeError):
        if isinstance(exc, cls):
            return "raises " + cls.__name__
    return "raises " + type(exc).__name__


@lib.use_kernel_forward_from_hub("SiluAndMul")
class SiluAndMul(nn.Module):
    def forward(self, x):
        d = x.shape[-1] // 2
        return F.silu(x[..., :d]) * x[..., d:]


def model():
    return nn.Sequential(nn.Linear(8, 16), SiluAndMul(), nn.Linear(8, 2))


def kernelize(m, mapping, **kwargs):
    with lib.use_kernel_mapping(mapping, inherit_mapping=False):
        try:
            lib.kernelize(m, **kwargs)
        except Exception as exc:
            return category(exc)
    return sorted(lib.get_kernelized_layers(m).layers) if "forward" in m[1].__dict__ \
        else "original"


report = {}
# kernelize's decision for each layer x registered mode x requested mode x use_fallback
for layer in ("SiluAndMul", "NoBackward", "NoCompile"):
    repo = lib.LocalLayerRepository(kernel, layer_name=layer)
    for reg_name, reg in REGISTERED.items():
        for mode_name, mode in MODES.items():
            for fallback in (True, False):
                mapping = {"SiluAndMul": {"cpu": {reg: repo}}}
                key = f"{layer} registered {reg_name}, kernelize {mode_name}, {fallback}"
                report[key] = kernelize(model(), mapping, mode=mode, device="cpu",
                                        use_fallback=fallback)

# KernelizeFallback: its values, and each case on its own
report["flags"] = {f.name: f.value for f in lib.KernelizeFallback}
F_ = lib.KernelizeFallback
good = lib.LocalLayerRepository(kernel, layer_name="SiluAndMul")
gone = lib.LocalLayerRepository(missing, layer_name="SiluAndMul")
cases = {
    "no layer": ({}, M.INFERENCE),
    "no device": ({"SiluAndMul": {"cuda": good}}, M.INFERENCE),
    "no mode": ({"SiluAndMul": {"cpu": {M.INFERENCE: good}}}, M.TRAINING),
    "cannot load": ({"SiluAndMul": {"cpu": gone}}, M.INFERENCE),
}
for name, (mapping, mode) in cases.items():
    for flags in ("NONE", "NO_LAYER", "NO_DEVICE", "NO_COMPATIBLE_MODE", "DEFAULT", "ALL"):
        report[f"{name} {flags}"] = kernelize(model(), mapping, mode=mode, device="cpu",
                                              use_fallback=getattr(F_, flags))

# a function made kernelizable, replaced by the kernel's function (FuncRepository family)
@lib.use_kernel_func_from_hub("silu_and_mul")
def silu_and_mul(x):
    d = x.shape[-1] // 2
    return F.silu(x[..., :d]) * x[..., d:]


@lib.use_kernelized_func(silu_and_mul)
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x):
        return silu_and_mul(self.proj(x))


block = Block()
x = torch.randn(3, 8)
expected = block(x)
repo = lib.LocalFuncRepository(kernel, func_name="silu_and_mul")
with lib.use_kernel_mapping({"silu_and_mul": {"cpu": repo}}, inherit_mapping=False):
    lib.kernelize(block, mode=M.INFERENCE, device="cpu")
torch.testing.assert_close(block(x), expected)
kernelized = lib.get_kernelized_layers(block)
loaded = [k.module for k in lib.get_loaded_kernels()]
report["funcs"] = {"layers": sorted(kernelized.layers),
                   "funcs": sorted(map(list, kernelized.funcs)),
                   "repo is the mapping's": [f.repo == repo for f in kernelized.funcs.values()],
                   "kernel calls": [list(c) for m in loaded for c in m.CALLS]}
print(json.dumps(report))
'''


def drive(library: str, kernel: Path, tmp: Path) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != "DISABLE_KERNEL_MAPPING"}
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(DRIVER), library, str(kernel),
                           str(tmp / "no-kernel-here")], capture_output=True, text=True,
                          timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], dict[str, Any]]:
    require_upstream()
    root = tmp_path_factory.mktemp("parity-layers")
    make_layers_variant(root / "kernel" / "build", HOST, uid=uuid.uuid4().hex[:7])
    return drive("kernelkit", root / "kernel", root), drive("kernels", root / "kernel", root)


def test_kernelize_decides_as_upstream_in_every_mode(
        reports: tuple[dict[str, Any], dict[str, Any]]) -> None:
    ours, theirs = reports
    table = {k: v for k, v in ours.items() if " registered " in k}
    assert len(table) == 3 * 4 * 4 * 2
    assert table == {k: v for k, v in theirs.items() if " registered " in k}
    # the 0.19 rule this task is about: training without backward keeps the original forward
    assert table["NoBackward registered TRAINING, kernelize TRAINING, True"] == "original"
    assert table["NoBackward registered TRAINING, kernelize TRAINING, False"] == \
        "raises ValueError"
    assert table["NoBackward registered TRAINING, kernelize INFERENCE, True"] == ["1"]


def test_kernelize_fallback_as_upstream(reports: tuple[dict[str, Any], dict[str, Any]]) -> None:
    ours, theirs = reports
    assert ours["flags"] == theirs["flags"]
    cases = {k: v for k, v in ours.items() if k.split()[-1] in (
        "NONE", "NO_LAYER", "NO_DEVICE", "NO_COMPATIBLE_MODE", "DEFAULT", "ALL")}
    assert cases == {k: theirs[k] for k in cases}
    assert cases["cannot load DEFAULT"] == "raises FileNotFoundError"
    assert cases["cannot load ALL"] == "original"
    assert cases["no mode NO_LAYER"] == "raises ValueError"


def test_function_repositories_and_kernelized_funcs_as_upstream(
        reports: tuple[dict[str, Any], dict[str, Any]]) -> None:
    ours, theirs = reports
    assert ours["funcs"] == theirs["funcs"]
    assert ours["funcs"]["funcs"] == [["", "silu_and_mul"]]
    assert ours["funcs"]["kernel calls"] == [["silu_and_mul", [3, 8]]]


# --- picklable locked repositories, repos_for_device ------------------------------------


@pytest.fixture
def locked_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    from kernelkit.hub.local import LocalGitHub
    from kernelkit.lock.project import lock_project

    monkeypatch.setenv("KERNELKIT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("KERNELKIT_HUB", str(tmp_path / "hub"))
    hub = LocalGitHub(tmp_path / "hub")
    build = tmp_path / "src" / "build"
    make_layers_variant(build, HOST, uid=uuid.uuid4().hex[:7])
    files = build_files(build)
    sha = hub.publish("kernels-community/act-layers", "v1", files, delete_prefixes=("build/",))
    hub.tag("kernels-community/act-layers", "v1.0.0", sha)
    project = tmp_path / "app"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[project]\nname = "app"\n\n[tool.kernels.dependencies]\n'
        '"kernels-community/act-layers" = ">=1"\n')
    lock_project(project, hub)
    return {"project": project, "sha": sha, "tmp": tmp_path}


UNPICKLE_AND_KERNELIZE = r'''
import json, pickle, sys
import torch
from torch import nn
import kernelkit

layer_repo, func_repo = pickle.loads(bytes.fromhex(sys.argv[1]))


@kernelkit.use_kernel_forward_from_hub("SiluAndMul")
class SiluAndMul(nn.Module):
    def forward(self, x):
        d = x.shape[-1] // 2
        return torch.nn.functional.silu(x[..., :d]) * x[..., d:]


model = nn.Sequential(nn.Linear(8, 16), SiluAndMul())
with kernelkit.use_kernel_mapping({"SiluAndMul": {"cpu": layer_repo}}, inherit_mapping=False):
    kernelkit.kernelize(model, mode=kernelkit.Mode.INFERENCE, device="cpu")
model(torch.randn(2, 8))
func_layer = func_repo.load()
print(json.dumps({"kernelized": sorted(kernelkit.get_kernelized_layers(model).layers),
                  "revision": layer_repo.revision, "func": func_layer.__name__,
                  "calls": [list(c) for k in kernelkit.get_loaded_kernels()
                            for c in k.module.CALLS]}))
'''


def test_locked_repositories_pickle_with_their_lock(locked_project: dict[str, Any]) -> None:
    """Unpickled in another process after kernels.lock is gone (a worker elsewhere), a locked
    repository still loads its locked commit: it carries the lock entries (as upstream)."""
    project = locked_project["project"]
    layer = LockedLayerRepository("kernels-community/act-layers", lockfile=project,
                                  layer_name="SiluAndMul")
    func = LockedFuncRepository("kernels-community/act-layers", lockfile=project,
                                func_name="silu_and_mul")
    copy = pickle.loads(pickle.dumps(layer))
    assert copy == layer and hash(copy) == hash(layer) and copy.revision == layer.revision
    assert pickle.loads(pickle.dumps(func)) == func != layer
    blob = pickle.dumps((layer, func)).hex()
    (project / "kernels.lock").unlink()
    proc = subprocess.run([sys.executable, "-c", UNPICKLE_AND_KERNELIZE, blob],
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])})
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out == {"kernelized": ["1"], "revision": locked_project["sha"],
                   "func": "silu_and_mul", "calls": [["SiluAndMul", [2, 16]]]}


def test_upstream_pickles_its_locked_repository_too(locked_project: dict[str, Any]) -> None:
    """The upstream behaviour the test above matches, on the same lock file."""
    require_upstream()
    code = ("import json, pickle, sys; from pathlib import Path; import kernels\n"
            "r = kernels.LockedLayerRepository('kernels-community/act-layers', "
            "lockfile=Path(sys.argv[1]), layer_name='SiluAndMul')\n"
            "print(json.dumps(pickle.loads(pickle.dumps(r)) == r))")
    lock = locked_project["project"] / "kernels.lock"
    proc = subprocess.run([sys.executable, "-c", code, str(lock)], capture_output=True,
                          text=True, timeout=120)
    if proc.returncode != 0 and "Cannot parse KernelLocks" in proc.stderr:
        pytest.skip("upstream cannot read kernelkit's kernels.lock yet (issue 22, item 1)")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout.strip().splitlines()[-1]) is True


def test_repos_for_device() -> None:
    """Per device type, the repositories for a device index: CPU-like types ignore it; CUDA
    picks by the device's capability, and with no GPU visible only a mapping registered
    without properties applies."""
    from kernelkit.layers import CUDAProperties

    def repo(name: str) -> LayerRepository:
        return LayerRepository("kernels-community/x", layer_name=name, version=1)

    with use_kernel_mapping({"L": {
            "cpu": repo("cpu"),
            Device("cuda"): {Mode.INFERENCE: repo("any")},
            Device("cuda", CUDAProperties(80, 89)): {Mode.INFERENCE: repo("ampere")}}},
            inherit_mapping=False):
        by_device = current_mapping()["L"]
        assert by_device["cpu"].repos_for_device(3) == {Mode.FALLBACK: repo("cpu")}
        chosen = by_device["cuda"].repos_for_device()
        if torch.cuda.is_available():
            major, minor = torch.cuda.get_device_capability()
            expected = "ampere" if 80 <= major * 10 + minor <= 89 else "any"
        else:
            expected = "any"
        assert chosen == {Mode.INFERENCE: repo(expected)}


def test_kernelize_fallback_is_exported_and_checked() -> None:
    import kernelkit

    assert kernelkit.KernelizeFallback is KernelizeFallback
    with pytest.raises(TypeError, match="bool or a KernelizeFallback"):
        kernelkit.kernelize(torch.nn.Linear(2, 2), mode=Mode.INFERENCE,
                            use_fallback="yes")  # type: ignore[arg-type]


def test_func_repository_from_a_hub(locked_project: dict[str, Any],
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """``use_kernel_func_from_hub`` + ``FuncRepository``: the kernel's function, downloaded from
    a real local hub by version, replaces the marked function inside a model."""
    import kernelkit

    monkeypatch.setenv("KERNELKIT_HUB", str(locked_project["tmp"] / "hub"))

    @kernelkit.use_kernel_func_from_hub("silu_and_mul")
    def silu_and_mul(x: torch.Tensor) -> torch.Tensor:
        d = x.shape[-1] // 2
        return torch.nn.functional.silu(x[..., :d]) * x[..., d:]

    @kernelkit.use_kernelized_func(silu_and_mul)
    class Block(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return silu_and_mul(x)

    block = Block()
    repo = kernelkit.FuncRepository("kernels-community/act-layers", func_name="silu_and_mul",
                                    version=1)
    assert str(repo) == ("`kernels-community/act-layers` (version: 1), function "
                         "`silu_and_mul`")
    with use_kernel_mapping({"silu_and_mul": {"cpu": repo}}, inherit_mapping=False):
        kernelkit.kernelize(block, mode=Mode.INFERENCE, device="cpu")
    x = torch.randn(2, 6)
    torch.testing.assert_close(block(x), torch.nn.functional.silu(x[..., :3]) * x[..., 3:])
    [loaded] = [k for k in kernelkit.get_loaded_kernels() if k.metadata.name == "act-layers"]
    assert loaded.module.CALLS == [("silu_and_mul", (2, 6))]
    assert loaded.repo_info is not None and loaded.repo_info.revision == locked_project["sha"]
    [(key, func)] = kernelkit.get_kernelized_layers(block).funcs.items()
    assert key == ("", "silu_and_mul") and func.repo is repo
