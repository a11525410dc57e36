"""The variables that put ccache in front of CMake's compilers."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from kernelkit.builder.caches.compiler_cache import ccache_environ


def _fake_path(tmp_path: Path) -> dict[str, str]:
    """A PATH with an executable named ccache (only found, never run here)."""
    exe = tmp_path / "bin" / "ccache"
    exe.parent.mkdir()
    exe.write_text("#!/bin/sh\nexit 0\n")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return {"PATH": f"{exe.parent}{os.pathsep}/usr/bin"}


def test_ccache_in_depend_mode_unless_the_caller_chose(tmp_path: Path) -> None:
    env = _fake_path(tmp_path)
    out = ccache_environ(env, cache_dir=tmp_path / "c", project=tmp_path, stats_log=tmp_path / "s")
    assert out["CCACHE_DEPEND"] == "1"
    assert out["CMAKE_CUDA_COMPILER_LAUNCHER"] == str(tmp_path / "bin" / "ccache")
    assert (out["CCACHE_BASEDIR"], out["CCACHE_NOHASHDIR"]) == (str(tmp_path), "1")
    for own in ({"CCACHE_DEPEND": "0"}, {"CCACHE_NODEPEND": "1"}):
        chosen = ccache_environ({**env, **own}, cache_dir=tmp_path / "c", project=tmp_path,
                                stats_log=tmp_path / "s")
        assert "CCACHE_DEPEND" not in chosen


def test_no_cache_dir_means_no_launcher(tmp_path: Path) -> None:
    env = _fake_path(tmp_path)
    assert ccache_environ(env, cache_dir=None, project=tmp_path, stats_log=tmp_path / "s") == {}


def test_nvcc_path_maps_stay_out_of_the_key_and_the_callers_choices_stay(tmp_path: Path) -> None:
    env = _fake_path(tmp_path)
    out = ccache_environ(env, cache_dir=tmp_path / "c", project=tmp_path, stats_log=tmp_path / "s")
    assert out["CCACHE_IGNOREOPTIONS"] == "-Xcompiler=-ffile-prefix-map=*"
    own = ccache_environ({**env, "CCACHE_IGNOREOPTIONS": "-Wall -DSTAMP=*"},
                         cache_dir=tmp_path / "c", project=tmp_path, stats_log=tmp_path / "s")
    assert own["CCACHE_IGNOREOPTIONS"].split() == \
        ["-Wall", "-DSTAMP=*", "-Xcompiler=-ffile-prefix-map=*"]


def test_kernelkit_ccache_remote_becomes_ccaches_remote_storage(tmp_path: Path) -> None:
    import pytest

    from kernelkit.errors import UsageError

    env = _fake_path(tmp_path)
    plain = ccache_environ(env, cache_dir=tmp_path / "c", project=tmp_path,
                           stats_log=tmp_path / "s")
    assert "CCACHE_REMOTE_STORAGE" not in plain
    shared = {**env, "KERNELKIT_CCACHE_REMOTE": " file:/srv/cc  http://cache:8080/cc|read-only "}
    out = ccache_environ(shared, cache_dir=tmp_path / "c", project=tmp_path,
                         stats_log=tmp_path / "s")
    assert out["CCACHE_REMOTE_STORAGE"] == "file:/srv/cc http://cache:8080/cc|read-only"
    with pytest.raises(UsageError, match=r"KERNELKIT_CCACHE_REMOTE: '/srv/cc' is not a ccache "
                                         r"remote storage") as caught:
        ccache_environ({**env, "KERNELKIT_CCACHE_REMOTE": "/srv/cc"}, cache_dir=tmp_path / "c",
                       project=tmp_path, stats_log=tmp_path / "s")
    assert "file:/shared/dir" in (caught.value.hint or "")
    from kernelkit.builder.api import BuildSettings

    with pytest.raises(UsageError, match="KERNELKIT_CCACHE_REMOTE"):  # before any variant
        BuildSettings.from_environ({"KERNELKIT_CCACHE_REMOTE": "s3://bucket"})


def test_cache_stats_say_what_came_from_the_remote_storage() -> None:
    from kernelkit.builder.caches.compiler_cache import CacheStats

    assert str(CacheStats(4, 0)) == "4 hits, 0 misses"
    assert str(CacheStats(4, 1, remote_hits=3)) == "4 hits (3 from the remote storage), 1 misses"
    assert str(CacheStats(0, 4, remote_errors=2)).endswith(
        "; 2 remote storage lookups or writes failed (check KERNELKIT_CCACHE_REMOTE; those "
        "compiles used the local cache alone)")
