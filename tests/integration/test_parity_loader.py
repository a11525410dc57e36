"""Loader behaviour that must match upstream ``kernels`` 0.19.1: ``kernels-minver``, dedup of
loaded modules by ``metadata.id`` with a digest comparison, kernel dependencies and
``get_kernel_dep``, ``check_arch``. Real variant trees (tests/helpers.py), a real local git
hub, and upstream run side by side in a fresh interpreter (tests/upstream_run.py)."""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from kernelkit.errors import (  # noqa: E402
    KernelDepCycleError,
    KernelDepError,
    KernelIdConflictError,
    LoaderTooOldError,
    MetadataError,
)
from kernelkit.hub.local import LocalGitHub  # noqa: E402
from kernelkit.loader import api  # noqa: E402
from kernelkit.loader.compat import KERNELS_COMPAT_VERSION  # noqa: E402
from kernelkit.variants.host import detect_system  # noqa: E402
from tests.helpers import build_files, make_variant  # noqa: E402
from tests.upstream_run import run_upstream  # noqa: E402

HOST = detect_system().arch_variant() or "torch-cpu"

# Load each directory with upstream's get_local_kernel, in order, in one process; report
# per directory "<module name>" or "raises: <exception type>".
UPSTREAM_LOAD = """
import json, sys
from pathlib import Path
import kernels
out = []
for path in sys.argv[1:]:
    try:
        out.append(kernels.get_local_kernel(Path(path)).__name__)
    except Exception as exc:
        out.append("raises: " + type(exc).__name__)
print(json.dumps(out))
"""


def uid() -> str:
    return uuid.uuid4().hex[:7]


def outcome(path: Path) -> str:
    """kernelkit's get_local_kernel, reported as UPSTREAM_LOAD reports upstream's: the
    ``metadata.id`` of the module loaded, or the upstream base class of the error."""
    try:
        module = api.get_local_kernel(path)
    except (LoaderTooOldError, KernelIdConflictError):
        return "raises: RuntimeError"
    except MetadataError:
        return "raises: ValueError"
    return next(lk.metadata.id for lk in api.get_loaded_kernels() if lk.module is module)


def test_compat_version_is_the_upstream_release_we_compare_with() -> None:
    import kernels

    assert ".".join(map(str, KERNELS_COMPAT_VERSION)) == kernels.__version__ == "0.19.1"


def test_kernels_minver_refuses_as_upstream(tmp_path: Path) -> None:
    minvers: list[Any] = [None, (0, 17, 0), (0, 19, 0), (0, 19, 1), (0, 19, 2), (0, 20, 0),
                          (1, 0, 0)]
    dirs = []
    for i, minver in enumerate(minvers):
        dirs.append(tmp_path / f"k{i}")
        make_variant(dirs[-1] / "build", HOST, uid=uid(), kernels_minver=minver)
    for bad in ("0.20", "1.2.3.4", "0.2x.0"):  # upstream's reader wants exactly x.y.z
        dirs.append(tmp_path / f"bad-{bad}")
        vdir = make_variant(dirs[-1] / "build", HOST, uid=uid(), sealed=False)
        data = json.loads((vdir / "metadata.json").read_text())
        (vdir / "metadata.json").write_text(json.dumps({**data, "kernels-minver": bad}))
    ours = [outcome(d) for d in dirs]
    assert run_upstream(UPSTREAM_LOAD, *map(str, dirs)) == ours
    assert [o.startswith("raises") for o in ours] == [False] * 4 + [True] * 6

    with pytest.raises(LoaderTooOldError) as info:
        api.get_local_kernel(dirs[5])
    assert (info.value.required, info.value.implemented) == ("0.20.0", "0.19.1")
    assert info.value.variant == HOST and "upgrade kernelkit" in str(info.value)


def test_dedup_by_id_compares_digests_as_upstream(tmp_path: Path) -> None:
    """Pairs loaded one after the other; the second of a pair is the same build (reused),
    another build (refused), or sealed differently (refused)."""

    def pair(name: str, *, same: bool, sealed: tuple[bool, bool]) -> list[Path]:
        first = make_variant(tmp_path / name / "a" / "build", HOST, uid=(u := uid()),
                             sealed=sealed[0])
        second = tmp_path / name / "b" / "build" / HOST
        if same:
            shutil.copytree(first, second)
        else:  # the same id, other code
            make_variant(second.parent, HOST, uid=u, factor=9.0, sealed=sealed[1])
        if same and sealed[1] != sealed[0]:
            make_variant(second.parent, HOST, uid=u, sealed=sealed[1])
        return [first, second]

    cases = {
        "copy": pair("copy", same=True, sealed=(True, True)),
        "rebuilt": pair("rebuilt", same=False, sealed=(True, True)),
        "unsealed-copy": pair("unsealed-copy", same=True, sealed=(False, False)),
        "half-sealed": pair("half-sealed", same=True, sealed=(True, False)),
        "unsealed-rebuilt": pair("unsealed-rebuilt", same=False, sealed=(False, False)),
    }
    paths = [p for pair_ in cases.values() for p in pair_]
    ours = [outcome(p) for p in paths]
    theirs = run_upstream(UPSTREAM_LOAD, *map(str, paths))
    ids = {name: ours[2 * i] for i, name in enumerate(cases)}
    assert ours == [ids["copy"], ids["copy"],
                    ids["rebuilt"], "raises: RuntimeError",
                    ids["unsealed-copy"], ids["unsealed-copy"],
                    ids["half-sealed"], "raises: RuntimeError",
                    ids["unsealed-rebuilt"], "raises: RuntimeError"]
    # upstream names modules by id: the same values; it reuses an unsealed other build
    # without comparing (kernelkit hashes both trees and refuses it: docs/security.md)
    assert theirs[:8] == ours[:8]
    assert theirs[8:] == [ids["unsealed-rebuilt"]] * 2


def test_a_conflicting_build_is_never_imported(tmp_path: Path) -> None:
    u = uid()
    first = make_variant(tmp_path / "a" / "build", HOST, uid=u)
    other = make_variant(tmp_path / "b" / "build", HOST, uid=u, factor=5.0,
                         init_extra="raise SystemExit('this code must never run')\n")
    module = api.get_local_kernel(first)
    with pytest.raises(KernelIdConflictError) as info:
        api.get_local_kernel(other)
    assert info.value.loaded == str(first) and info.value.variant == str(other)
    assert "__init__.py: different content" in info.value.differences
    assert torch.equal(module.scale(torch.ones(1)), torch.full((1,), 2.0))


# --- kernel dependencies ------------------------------------------------------------------

DEP_INIT = """
import kernelkit as _kk

_base = _kk.get_kernel_dep({dep!r})


def via_dep(x):
    return _base.scale(x) + 1
"""


def publish_kernel(hub: LocalGitHub, tmp: Path, repo_id: str, **kwargs: Any) -> str:
    build = tmp / f"build-{uuid.uuid4().hex[:8]}"
    make_variant(build, HOST, uid=uid(), name=repo_id.split("/")[1], **kwargs)
    files = build_files(build)
    return hub.publish(repo_id, "v1", files, delete_prefixes=("build/",))


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> LocalGitHub:
    monkeypatch.setenv("KERNELKIT_HUB", str(tmp_path / "hub"))
    monkeypatch.setenv("KERNELKIT_TRUSTED_PUBLISHERS", "acme")
    return LocalGitHub(tmp_path / "hub")


def test_kernel_dependencies_load_first_and_get_kernel_dep_returns_them(
        hub: LocalGitHub, tmp_path: Path) -> None:
    publish_kernel(hub, tmp_path, "acme/base", factor=3.0)
    publish_kernel(hub, tmp_path, "acme/top", init_extra=DEP_INIT.format(dep="acme/base"),
                   kernel_depends=({"repo-id": "acme/base", "version": 1},))
    top = api.get_kernel("acme/top", version=1, hub=hub)
    assert torch.equal(top.via_dep(torch.ones(1)), torch.full((1,), 4.0))  # 1 * 3 + 1
    loaded = {lk.metadata.name for lk in api.get_loaded_kernels()}
    assert {"base", "top"} <= loaded
    with pytest.raises(KernelDepError, match="only works during kernel loading"):
        api.get_kernel_dep("acme/base")

    # a local build of a kernel gets its dependencies from the hub too
    local = make_variant(tmp_path / "local" / "build", HOST, uid=uid(), name="top2",
                         init_extra=DEP_INIT.format(dep="acme/base"),
                         kernel_depends=({"repo-id": "acme/base", "version": 1},))
    assert torch.equal(api.get_local_kernel(local).via_dep(torch.ones(1)),
                       torch.full((1,), 4.0))


def test_an_undeclared_dependency_and_a_cycle_are_refused(hub: LocalGitHub,
                                                          tmp_path: Path) -> None:
    publish_kernel(hub, tmp_path, "acme/base")
    publish_kernel(hub, tmp_path, "acme/sneaky", init_extra=DEP_INIT.format(dep="acme/base"))
    with pytest.raises(KernelDepError, match="'acme/base' not found in kernel dependencies"):
        api.get_kernel("acme/sneaky", version=1, hub=hub)
    publish_kernel(hub, tmp_path, "acme/ping", init_extra=DEP_INIT.format(dep="acme/pong"),
                   kernel_depends=({"repo-id": "acme/pong", "version": 1},))
    publish_kernel(hub, tmp_path, "acme/pong", init_extra=DEP_INIT.format(dep="acme/ping"),
                   kernel_depends=({"repo-id": "acme/ping", "version": 1},))
    with pytest.raises(KernelDepCycleError, match="acme/ping -> acme/pong -> acme/ping"):
        api.get_kernel("acme/ping", version=1, hub=hub)
    assert not any(lk.metadata.name in ("ping", "pong") for lk in api.get_loaded_kernels())


# --- check_arch ----------------------------------------------------------------------------


def test_check_arch_is_a_no_op_without_that_gpu(tmp_path: Path) -> None:
    """On a machine without a CUDA device nothing can be checked (as upstream): a variant
    declaring CUDA archs loads with check_arch on; has_kernel agrees."""
    import torch
    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present: the next test checks the arch refusal")
    vdir = make_variant(tmp_path / "build", "torch-cuda", uid=uid(), archs=("7.5",))
    assert api.get_local_kernel(vdir, check_arch=True) is api.get_local_kernel(
        vdir, check_arch=False)


@pytest.mark.slow
@pytest.mark.cuda_build
@pytest.mark.gpu
def test_check_arch_refuses_a_build_for_another_gpu(tmp_path: Path,
                                                    cuda_torch_python: Path) -> None:
    """With a CUDA device: a build declaring only archs of another generation is refused
    (UnsupportedArchError), check_arch=False loads it anyway; a build for this device loads."""
    import subprocess

    code = """
import json, sys
sys.path.insert(0, sys.argv[1])
import torch
if not torch.cuda.is_available():
    print(json.dumps("no-gpu")); raise SystemExit
from pathlib import Path
from kernelkit.errors import UnsupportedArchError
from kernelkit.loader.api import get_local_kernel
major, minor = torch.cuda.get_device_capability()
out = {}
for name, check in (("other", True), ("other", False), ("this", True)):
    try:
        get_local_kernel(Path(sys.argv[2]) / name / "build" / "torch-cuda", check_arch=check)
        out[f"{name}-{check}"] = "loaded"
    except UnsupportedArchError as exc:
        out[f"{name}-{check}"] = str(exc).splitlines()[0]
print(json.dumps([major, minor, out]))
"""
    probe_code = ("import torch, json; print(json.dumps(torch.cuda.get_device_capability() "
                  "if torch.cuda.is_available() else None))")
    probe = subprocess.run([str(cuda_torch_python), "-c", probe_code], capture_output=True,
                           text=True, timeout=120)
    cap = json.loads(probe.stdout.strip().splitlines()[-1])
    if cap is None:
        pytest.skip("no CUDA device visible")
    other = "7.5" if cap[0] != 7 else "9.0"
    make_variant(tmp_path / "other" / "build", "torch-cuda", uid=uid(), archs=(other,))
    make_variant(tmp_path / "this" / "build", "torch-cuda", uid=uid(),
                 archs=(f"{cap[0]}.{cap[1]}",))
    src = str(Path(__file__).resolve().parents[2] / "src")
    proc = subprocess.run([str(cuda_torch_python), "-c", code, src, str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    major, minor, out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["other-True"].startswith("Kernel 'demo' variant 'torch-cuda' does not support")
    assert f"CUDA capability {major}.{minor}" in out["other-True"]
    assert out["other-False"] == "loaded" and out["this-True"] == "loaded"


def test_has_kernel_and_locked_loaders_take_check_arch() -> None:
    """The parameter is accepted everywhere upstream 0.19.1 accepts it."""
    import inspect

    import kernels

    import kernelkit

    for name in ("get_kernel", "get_local_kernel", "has_kernel", "load_kernel",
                 "get_locked_kernel", "LayerRepository", "LocalLayerRepository",
                 "LockedLayerRepository", "FuncRepository", "LocalFuncRepository",
                 "LockedFuncRepository"):
        theirs = inspect.signature(getattr(kernels, name)).parameters["check_arch"]
        ours = inspect.signature(getattr(kernelkit, name)).parameters["check_arch"]
        assert (ours.default, ours.kind) == (theirs.default, theirs.kind) == (
            True, inspect.Parameter.KEYWORD_ONLY), name
