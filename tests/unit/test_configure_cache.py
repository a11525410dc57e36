"""The configure cache: a configured CMake tree kept and put back for the same build directory."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from kernelkit.builder.caches import configure_cache as cc


def _tree(build: Path) -> None:
    (build / "CMakeFiles" / "4.4.5" / "CompilerIdCUDA").mkdir(parents=True)
    (build / "CMakeFiles" / "4.4.5" / "CMakeCUDACompiler.cmake").write_text("set(X 1)\n")
    (build / "CMakeFiles" / "4.4.5" / "CompilerIdCUDA" / "a.out").write_bytes(b"\0" * 64)
    (build / "CMakeCache.txt").write_text("CMAKE_CACHEFILE_DIR:INTERNAL=x\n")
    (build / "build.ninja").write_text("rule cc\n")


def test_kept_tree_comes_back_without_scratch_and_newer_than_its_inputs(tmp_path: Path) -> None:
    inputs, build, cache = tmp_path / "src", tmp_path / "cmake-build", tmp_path / "cache"
    inputs.mkdir()
    (inputs / "CMakeLists.txt").write_text("project(x)\n")
    tool = tmp_path / "cmake"
    tool.write_text("#!/bin/sh\n")
    key = cc.configure_key("fp", inputs, build, [tool, None])
    _tree(build)
    cc.store(cache, key, build)
    assert not (cache / key / "CMakeFiles" / "4.4.5" / "CompilerIdCUDA").exists()
    assert not cc.restore(cache, key, build)  # a tree is there: never overwritten
    shutil.rmtree(build)
    os.utime(cache / key / "build.ninja", (1000, 1000))  # kept long ago
    before = time.time() - 1
    assert cc.restore(cache, key, build)
    assert (build / "CMakeCache.txt").read_text() == "CMAKE_CACHEFILE_DIR:INTERNAL=x\n"
    # fresh times: ninja must not take the generated inputs as newer and re-run CMake
    assert (build / "build.ninja").stat().st_mtime >= before
    assert not cc.restore(cache, "other", tmp_path / "elsewhere")


def test_key_covers_inputs_tools_fingerprint_and_place(tmp_path: Path) -> None:
    inputs = tmp_path / "src"
    (inputs / "cmake").mkdir(parents=True)
    (inputs / "cmake" / "kernelkit.cmake").write_text("a\n")
    tool = tmp_path / "nvcc"
    tool.write_text("1")
    base = cc.configure_key("fp", inputs, tmp_path / "b", [tool])
    assert cc.configure_key("fp", inputs, tmp_path / "b", [tool]) == base
    assert cc.configure_key("fp2", inputs, tmp_path / "b", [tool]) != base
    assert cc.configure_key("fp", inputs, tmp_path / "other", [tool]) != base
    (inputs / "cmake" / "kernelkit.cmake").write_text("b\n")
    changed_input = cc.configure_key("fp", inputs, tmp_path / "b", [tool])
    assert changed_input != base
    tool.write_text("12")  # a reinstalled compiler
    assert cc.configure_key("fp", inputs, tmp_path / "b", [tool]) != changed_input


def test_off_and_location(tmp_path: Path) -> None:
    assert cc.configure_cache_dir({"KERNELKIT_CONFIGURE_CACHE": "0"}) is None
    assert cc.configure_cache_dir({"KERNELKIT_CONFIGURE_CACHE": str(tmp_path)}) == tmp_path
    assert cc.configure_cache_dir({"XDG_CACHE_HOME": str(tmp_path)}) == \
        tmp_path / "kernelkit" / "configure"


def test_prune_keeps_the_newest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cc, "KEEP", 2)
    for i in range(4):
        d = tmp_path / f"k{i}"
        d.mkdir()
        os.utime(d, (1000 + i, 1000 + i))
    cc._prune(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k2", "k3"]
