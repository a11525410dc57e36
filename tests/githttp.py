"""A real git smart-HTTP server on 127.0.0.1 for tests: ``git http-backend`` (git's own CGI
program) behind a small threaded HTTP server that demands Basic authentication.

Every request without the right ``Authorization`` gets ``401`` with ``WWW-Authenticate``, as a
real git host answers, so git must ask its credential helpers. The server records the
credentials it was offered (to check what git sent) and stops when the ``with`` block ends.
"""

from __future__ import annotations

import base64
import os
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


@dataclass
class GitHttpServer:
    url: str  # http://127.0.0.1:<port> (no credentials)
    root: Path  # the directory of bare repositories
    offered: list[str] = field(default_factory=list)  # decoded "user:password" per request

    def create(self, repo_id: str) -> Path:
        """An empty bare repository ``<root>/<org>/<name>.git`` (a hosting service's "new")."""
        path = self.root / f"{repo_id}.git"
        path.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(path)], check=True)
        return path


def _handler(server: GitHttpServer, user: str, password: str) -> type[BaseHTTPRequestHandler]:
    expected = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"

        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            self._serve()

        def do_POST(self) -> None:
            self._serve()

        def _serve(self) -> None:
            auth = self.headers.get("Authorization", "")
            if auth.startswith("Basic "):
                server.offered.append(base64.b64decode(auth[6:]).decode(errors="replace"))
            if auth != expected:
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="kernels"')
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self._cgi(self._body())

        def _body(self) -> bytes:
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                out = bytearray()
                while True:
                    size = int(self.rfile.readline().split(b";")[0], 16)
                    if size == 0:
                        self.rfile.readline()
                        return bytes(out)
                    out += self.rfile.read(size)
                    self.rfile.readline()
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))

        def _cgi(self, body: bytes) -> None:
            path, _, query = self.path.partition("?")
            env = {
                "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                "GIT_PROJECT_ROOT": str(server.root), "GIT_HTTP_EXPORT_ALL": "1",
                "REQUEST_METHOD": self.command, "PATH_INFO": path, "QUERY_STRING": query,
                "CONTENT_TYPE": self.headers.get("Content-Type", ""),
                "CONTENT_LENGTH": str(len(body)), "REMOTE_USER": user, "REMOTE_ADDR": "127.0.0.1",
                "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
                "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""),
            }
            proc = subprocess.run(["git", "http-backend"], input=body, env=env,
                                  capture_output=True, timeout=60)
            head, _, payload = proc.stdout.partition(b"\r\n\r\n")
            status = 200
            headers = []
            for line in head.decode("latin-1").split("\r\n"):
                name, _, value = line.partition(":")
                if name.lower() == "status":
                    status = int(value.split()[0])
                elif name:
                    headers.append((name, value.strip()))
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    return Handler


@contextmanager
def git_http_server(root: Path, user: str, password: str) -> Iterator[GitHttpServer]:
    """Serve the bare repositories under ``root`` on a free loopback port until the block
    ends; only ``user``/``password`` may read or push."""
    root.mkdir(parents=True, exist_ok=True)
    server = GitHttpServer("", root)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(server, user, password))
    server.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.1},
                              daemon=True)
    thread.start()
    try:
        yield server
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=10)


class ArgvWatcher:
    """Scans the command line of every process of this user (``/proc/<pid>/cmdline``) until
    stopped, keeping each one that contains ``needle``: a secret on a command line is readable
    by every user of the machine. Sampling, so it proves presence, not absence; pair it with a
    ``git`` wrapper on ``PATH`` (:func:`recording_git`) that logs every argv it is given."""

    def __init__(self, needle: str) -> None:
        self.needle = needle.encode()
        self.seen: list[str] = []
        self.scans = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> ArgvWatcher:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        uid = os.getuid()
        while not self._stop.is_set():
            for pid in os.listdir("/proc"):
                if not pid.isdigit():
                    continue
                try:
                    if os.stat(f"/proc/{pid}").st_uid != uid:
                        continue
                    with open(f"/proc/{pid}/cmdline", "rb") as fh:
                        cmdline = fh.read()
                except OSError:
                    continue
                if self.needle in cmdline:
                    self.seen.append(cmdline.replace(b"\0", b" ").decode(errors="replace"))
            self.scans += 1
            self._stop.wait(0.002)  # a short rest: the scan must not starve what it watches


def recording_git(bin_dir: Path, log: Path) -> Path:
    """A ``git`` in ``bin_dir`` that appends its argv to ``log``, then runs the real git."""
    import shutil

    real = shutil.which("git")
    assert real is not None
    bin_dir.mkdir(parents=True, exist_ok=True)
    script = bin_dir / "git"
    script.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\nexec "{real}" "$@"\n')
    script.chmod(0o755)
    return bin_dir
