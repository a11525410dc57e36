"""Build environments installed from the toolchain lock with real pip and real venvs.

The torch 2.13.0 CPU wheel lies on this machine's disk (pip find-links), so an environment takes
about a minute. ``KERNELKIT_TEST_ENVS`` may name a directory to keep environments between
sessions (the tests that delete or break an environment use their own directory).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kernelkit.builder.toolchain.envs import BuildEnv, ensure_env, env_spec
from kernelkit.builder.toolchain.locking import lock_target
from kernelkit.builder.toolchain.toolchain_lock import (
    LOCK_FILENAME,
    LockedWheel,
    ToolchainLock,
)
from kernelkit.errors import CommandError, ExitCode, IntegrityError, LockError
from kernelkit.manifest import load_manifest
from kernelkit.variants.matrix import BuildTarget, targets_for

ADDONE = Path(__file__).resolve().parents[1] / "data" / "projects" / "addone"
VARIANT = "torch213-cxx11-cpu-x86_64-linux"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def target() -> BuildTarget:
    return next(t for t in targets_for(load_manifest(ADDONE)) if t.variant == VARIANT)


@pytest.fixture(scope="module")
def lock(target: BuildTarget) -> ToolchainLock:
    entry, _ = lock_target(target, python=Path(sys.executable))
    return ToolchainLock({VARIANT: entry})


def record_digest(env: BuildEnv) -> str:
    """Hash of torch's installed RECORD (the sha256 of every file the wheel installed), without
    bytecode (timestamps) and console scripts (their shebang names the temporary directory
    the environment was built in)."""
    record = next((env.path / "lib").glob("python*/site-packages/torch-*.dist-info/RECORD"))
    lines = sorted(ln for ln in record.read_text().splitlines()
                   if ".pyc," not in ln and not ln.startswith("../"))
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def _build_digest(project: Path, python: Path) -> dict[str, object]:
    from kernelkit.builder.api import build

    [result] = build(project, python=python, backends=["cpu"])
    return json.loads((result.path / "metadata.json").read_text())["digest"]


def _committed_copy(dest: Path) -> Path:
    shutil.copytree(ADDONE, dest)
    git = ["git", "-C", str(dest), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "x"], check=True)
    return dest


def test_lock_pins_the_local_torch_wheel(lock: ToolchainLock) -> None:
    entry = lock.variants[VARIANT]
    torch = next(w for w in entry.wheels if w.name == "torch")
    assert torch.version == "2.13.0+cpu" and torch.url.startswith("file://")
    assert len(torch.sha256) == 64 and torch.filename.endswith(".whl")
    assert {"filelock", "sympy", "typing_extensions"} <= {w.name for w in entry.wheels}


def test_create_delete_recreate_from_lock(tmp_path: Path, target: BuildTarget,
                                          lock: ToolchainLock) -> None:
    spec = env_spec(target, base_python=Path(sys.executable), locked=lock.variants[VARIANT])
    env = ensure_env(spec, tmp_path, log_path=tmp_path / "env.log")
    assert env.probe.ok and env.probe.torch_version == "2.13.0+cpu"
    expected = {w.name.lower().replace("_", "-"): w.version for w in lock.variants[VARIANT].wheels}
    assert {n: env.probe.dists[n] for n in expected} == expected  # type: ignore[index]
    first = record_digest(env)
    assert ensure_env(spec, tmp_path).path == env.path  # reused as is
    project = _committed_copy(tmp_path / "addone")
    built_first = _build_digest(project, env.python)

    shutil.rmtree(env.path)
    again = ensure_env(spec, tmp_path, log_path=tmp_path / "env.log")
    assert again.path == env.path and record_digest(again) == first
    # The same toolchain rebuilds the same build tree: every file's digest matches.
    assert _build_digest(project, again.python) == built_first
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".torch")] == []

    # A broken environment (torch no longer imports) is repaired by recreating it.
    (next((env.path / "lib").glob("python*/site-packages/torch")) / "__init__.py").unlink()
    repaired = ensure_env(spec, tmp_path, log_path=tmp_path / "env.log")
    assert repaired.probe.ok and record_digest(repaired) == first

    # Drift: the environment no longer matches the lock -> refused without --update-toolchain.
    entry = lock.variants[VARIANT]
    bumped = tuple(dataclasses.replace(w, version="0.0.1") if w.name == "filelock" else w
                   for w in entry.wheels)
    drifted = dataclasses.replace(spec, locked=dataclasses.replace(entry, wheels=bumped))
    with pytest.raises(LockError, match=r"filelock: locked 0.0.1, installed"):
        ensure_env(drifted, tmp_path)


def test_tampered_lock_fails_before_installing(tmp_path: Path, target: BuildTarget,
                                               lock: ToolchainLock) -> None:
    entry = lock.variants[VARIANT]
    bad_torch = tuple(dataclasses.replace(w, sha256="0" * 64) if w.name == "torch" else w
                      for w in entry.wheels)
    spec = env_spec(target, base_python=Path(sys.executable),
                    locked=dataclasses.replace(entry, wheels=bad_torch))
    with pytest.raises(IntegrityError, match=r"torch-2.13.0"):
        ensure_env(spec, tmp_path)
    assert [p for p in tmp_path.iterdir() if p.name != ".locks"] == []

    # A wheel kernelkit cannot pre-check (remote) is caught by pip's --require-hashes, which
    # verifies every download before it installs anything.
    remote = [w for w in entry.wheels if not w.url.startswith("file:")]
    if not remote:
        pytest.skip("every wheel is local here")
    bad_remote = tuple(dataclasses.replace(w, sha256="1" * 64) if w is remote[0] else w
                       for w in entry.wheels)
    spec = env_spec(target, base_python=Path(sys.executable),
                    locked=dataclasses.replace(entry, wheels=bad_remote))
    with pytest.raises(CommandError, match=r"(?i)hash"):
        ensure_env(spec, tmp_path / "envs", log_path=tmp_path / "pip.log")
    assert [p for p in (tmp_path / "envs").iterdir() if p.name != ".locks"] == []
    assert "Successfully installed" not in (tmp_path / "pip.log").read_text()


def test_cli_refuses_a_tampered_lock(tmp_path: Path, lock: ToolchainLock) -> None:
    project = tmp_path / "addone"
    shutil.copytree(ADDONE, project)
    data = lock.to_json()
    torch: dict[str, str] = next(w for w in data["variants"][VARIANT]["wheels"]
                                 if w["name"] == "torch")
    torch["sha256"] = "ab" * 32
    (project / LOCK_FILENAME).write_text(json.dumps(data))
    envs = tmp_path / "envs"
    proc = subprocess.run(
        [sys.executable, "-m", "kernelkit", "shell", str(project), "--variant", VARIANT,
         "--exec", "python", "-c", "print('inside')"],
        env={**os.environ, "KERNELKIT_ENVS": str(envs)}, capture_output=True, text=True)
    assert proc.returncode == ExitCode.INTEGRITY
    assert "integrity check failed" in proc.stderr and "nothing was installed" in proc.stderr
    assert "inside" not in proc.stdout
    assert not any(p.name.startswith(VARIANT) for p in envs.iterdir()) if envs.exists() else True


def test_locked_wheel_requirement_line() -> None:
    w = LockedWheel("torch", "2.13.0+cpu", "torch.whl", "file:///x", "a" * 64)
    assert w.requirement_line == f"torch==2.13.0+cpu --hash=sha256:{'a' * 64}"
