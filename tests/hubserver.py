"""``kernelkit serve`` as a test fixture: a real server process on a free loopback port.

The server is started with the real CLI (``python -m kernelkit serve``) in a subprocess, so
the tests talk to exactly what a team runs; it is stopped with SIGTERM (graceful shutdown) at
the end and must exit cleanly.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

WRITE_TOKEN = "hf_write_token_for_tests"
READ_TOKEN = "hf_read_token_for_tests"


@dataclass
class HubServer:
    url: str
    hub_dir: Path
    log: Path
    proc: subprocess.Popen[bytes]

    def env(self, token: str | None = WRITE_TOKEN, **extra: str) -> dict[str, str]:
        """Environment for a client process pointed at this server."""
        env = dict(os.environ)
        # no HF_HUB_DISABLE_TELEMETRY: upstream kernels 0.17 then sends a user agent ending in
        # "; ", which httpx refuses as an illegal header value
        env.update(HF_ENDPOINT=self.url,
                   HF_HUB_DISABLE_PROGRESS_BARS="1", **extra)
        env.pop("HF_TOKEN", None)
        env.pop("HF_HUB_OFFLINE", None)
        if token:
            env["HF_TOKEN"] = token
        return env


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _limit_files(nofile: int) -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))


@contextmanager
def run_server(hub_dir: Path, tmp: Path, *extra: str,
               nofile: int | None = None) -> Iterator[HubServer]:
    """The server on a free port; ``nofile``: its open-file limit (soft and hard)."""
    tokens = tmp / "write-tokens"
    tokens.write_text(f"# tokens that may publish\n{WRITE_TOKEN}\n")
    read_tokens = tmp / "read-tokens"
    read_tokens.write_text(f"{READ_TOKEN}\n")
    port = free_port()
    log = tmp / "server.log"
    src = str(Path(__file__).resolve().parents[1] / "src")
    env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "kernelkit", "serve", "--hub", str(hub_dir), "--port",
             str(port), "--token-file", str(tokens), "--read-token-file", str(read_tokens),
             "--graceful-timeout", "5", *extra],
            stdout=out, stderr=subprocess.STDOUT, env=env,
            preexec_fn=(lambda: _limit_files(nofile)) if nofile else None)
    server = HubServer(f"http://127.0.0.1:{port}", hub_dir, log, proc)
    try:
        _wait_ready(server)
        yield server
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise AssertionError(f"kernelkit serve ignored SIGTERM:\n{log.read_text()}") from None
    # uvicorn shuts down gracefully, then re-raises the signal it caught (exit by SIGTERM)
    assert code in (0, -signal.SIGTERM), f"kernelkit serve exited with {code}:\n{log.read_text()}"
    assert "Application shutdown complete" in log.read_text()


def _wait_ready(server: HubServer) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if server.proc.poll() is not None:
            raise AssertionError(f"kernelkit serve exited:\n{server.log.read_text()}")
        try:
            urllib.request.urlopen(f"{server.url}/api/organizations/x/overview", timeout=1)
            return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"kernelkit serve did not start:\n{server.log.read_text()}")
