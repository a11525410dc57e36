"""``kernelkit serve`` through the real clients: kernelkit's CLI and loader, huggingface_hub,
and upstream ``kernels`` (from PyPI), each in its own process with ``HF_ENDPOINT`` set.

(a) ``kernelkit upload --hub hf`` publishes, ``get_kernel`` loads through huggingface_hub;
(b) upstream ``kernels`` loads it with ``version=1`` and from a ``kernels.lock`` made by
``kernelkit lock``; (c) a missing, wrong or read-only token is refused and nothing is written;
(d) a client killed mid-upload leaves the repository readable and the next upload works.
Plus the HTTP details clients rely on: HEAD, ETag, X-Repo-Commit, ranges, path validation.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from kernelkit.hub.local import LocalGitHub
from kernelkit.loader.cache import RepoCache
from tests.helpers import make_variant
from tests.hubserver import READ_TOKEN, WRITE_TOKEN, HubServer, run_server

pytest.importorskip("huggingface_hub")
pytest.importorskip("uvicorn")

REPO = "acme/demo"
CPU = "torch213-cxx11-cpu-x86_64-linux"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[HubServer]:
    with run_server(tmp_path / "hub", tmp_path, "--trusted-publisher", "acme") as srv:
        yield srv


def run(argv: list[str], env: dict[str, str], cwd: Path | None = None,
        check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**env, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"}
    proc = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=300)
    if check and proc.returncode != 0:
        raise AssertionError(f"{argv} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def kernelkit(*args: str, env: dict[str, str],
              check: bool = True) -> subprocess.CompletedProcess[str]:
    return run([sys.executable, "-m", "kernelkit", *args], env, check=check)


def client_env(server: HubServer, tmp: Path, token: str | None = WRITE_TOKEN) -> dict[str, str]:
    return server.env(token, HF_HOME=str(tmp / "hf-home"), KERNELKIT_CACHE=str(tmp / "kk-cache"),
                      KERNELS_CACHE=str(tmp / "kernels-cache"), KERNELKIT_HUB="hf")


def project(tmp: Path, factor: float = 2.0) -> Path:
    root = tmp / f"kernel-{factor}"
    make_variant(root / "build", CPU, factor=factor)
    return root


def publish(server: HubServer, tmp: Path, *extra: str, factor: float = 2.0) -> dict[str, object]:
    out = tmp / f"upload-{factor}.json"
    kernelkit("upload", str(project(tmp, factor)), "--hub", "hf", "--repo-id", REPO,
              "--output-json", str(out), *extra, env=client_env(server, tmp))
    return dict(json.loads(out.read_text()))


LOAD_KERNELKIT = """
import torch, kernelkit
k = kernelkit.get_kernel("acme/demo", version=1)
print(k.scale(torch.ones(2)).tolist())
"""


def test_a_kernelkit_upload_then_get_kernel(server: HubServer, tmp_path: Path) -> None:
    result = publish(server, tmp_path, "--tag", "v1.0.0")
    assert result["status"] == "uploaded" and result["branch"] == "v1"
    assert result["url"] == f"{server.url}/kernels/{REPO}/tree/v1"
    store = LocalGitHub(server.hub_dir)
    assert store.resolve(REPO, "v1.0.0") == result["commit"] == store.resolve(REPO, "v1")
    env = client_env(server, tmp_path, token=None) | {"KERNELKIT_TRUSTED_PUBLISHERS": "acme"}
    out = run([sys.executable, "-c", LOAD_KERNELKIT], env)
    assert out.stdout.strip() == "[2.0, 2.0]"
    rc = RepoCache.of(tmp_path / "kk-cache", REPO, "hf:" + server.url.rstrip("/"))  # HF_ENDPOINT
    cached = rc.commit_dir(str(result["commit"])) / "build"
    assert sorted(p.name for p in cached.iterdir() if not p.name.startswith(".")) == [CPU]
    # same build again: nothing to upload
    assert publish(server, tmp_path)["status"] == "no_changes"


def test_a_private_upload_and_pull_request(server: HubServer, tmp_path: Path) -> None:
    first = publish(server, tmp_path, "--private")
    anonymous = client_env(server, tmp_path, token=None) | {"KERNELKIT_TRUSTED_PUBLISHERS": "acme"}
    refused = run([sys.executable, "-c", LOAD_KERNELKIT], anonymous, check=False)
    assert refused.returncode != 0 and "not found" in refused.stderr
    reader = anonymous | {"HF_TOKEN": READ_TOKEN}
    assert run([sys.executable, "-c", LOAD_KERNELKIT], reader).stdout.strip() == "[2.0, 2.0]"
    pr = publish(server, tmp_path, "--create-pr", factor=5.0)
    assert pr["status"] == "pull_request_created"
    assert pr["pull_requests"] == [{"branch": "v1",
                                    "url": f"{server.url}/kernels/{REPO}/discussions/1"}]
    assert LocalGitHub(server.hub_dir).resolve(REPO, "v1") == first["commit"]  # not merged


def test_b_upstream_kernels_loads_by_version_and_from_a_lock(server: HubServer,
                                                            tmp_path: Path) -> None:
    pytest.importorskip("kernels")
    result = publish(server, tmp_path)
    env = client_env(server, tmp_path, token=None)
    code = ("import torch, kernels\n"
            "k = kernels.get_kernel('acme/demo', version=1)\n"  # trusted: --trusted-publisher
            "print(k.scale(torch.ones(2)).tolist())\n")
    assert run([sys.executable, "-c", code], env).stdout.strip() == "[2.0, 2.0]"
    app = tmp_path / "app"
    app.mkdir()
    (app / "pyproject.toml").write_text('[project]\nname = "app"\nversion = "0"\n\n'
                                        '[tool.kernels.dependencies]\n"acme/demo" = 1\n')
    kernelkit("lock", str(app), "--hub", "hf", env=env)
    [lock] = json.loads((app / "kernels.lock").read_text())
    assert lock == {"dependency": {"repo-id": REPO, "version": 1},
                    "lock": {"commit": result["commit"]}}
    # upstream's own `kernels lock` through the same server writes the same file
    up = tmp_path / "upstream-app"
    up.mkdir()
    (up / "pyproject.toml").write_text((app / "pyproject.toml").read_text())
    kernels_cli = str(Path(sys.executable).parent / "kernels")
    run([kernels_cli, "lock", str(up)], env)
    assert (up / "kernels.lock").read_text() == (app / "kernels.lock").read_text()
    publish(server, tmp_path, factor=7.0)  # v1 moves on; the locks still name the old commit
    # kernelkit downloads and loads from its lock; upstream from its own
    kernelkit("download", str(app), "--hub", "hf", env=env)
    code = ("import torch, kernelkit\n"
            "k = kernelkit.load_kernel('acme/demo', lockfile='kernels.lock')\n"
            "print(k.scale(torch.ones(2)).tolist())\n")
    assert run([sys.executable, "-c", code], env, cwd=app).stdout.strip() == "[2.0, 2.0]"
    run([kernels_cli, "download", str(up)], env)
    code = ("import torch, kernels, pathlib\n"
            "k = kernels.load_kernel('acme/demo', lockfile=pathlib.Path('kernels.lock'))\n"
            "print(k.scale(torch.ones(2)).tolist())\n")
    offline = env | {"HF_HUB_OFFLINE": "1"}
    assert run([sys.executable, "-c", code], offline, cwd=up).stdout.strip() == "[2.0, 2.0]"


def _objects(hub_dir: Path) -> set[str]:
    return {str(p.relative_to(hub_dir)) for p in hub_dir.rglob("objects/**/*") if p.is_file()}


def test_c_missing_wrong_and_read_only_tokens_are_refused(server: HubServer,
                                                          tmp_path: Path) -> None:
    for token, status in ((None, 401), ("hf_not_a_token_at_all", 401), (READ_TOKEN, 403)):
        env = client_env(server, tmp_path, token=token)
        proc = kernelkit("upload", str(project(tmp_path)), "--hub", "hf", "--repo-id", REPO,
                         env=env, check=False)
        assert proc.returncode == 1 and "error: " in proc.stderr, proc.stderr
        assert "refused" in proc.stderr or "not found" in proc.stderr
        assert f'"POST /api/repos/create HTTP/1.1" {status}' in server.log.read_text()
        assert not (server.hub_dir / "acme").exists()
    first = publish(server, tmp_path)
    store = LocalGitHub(server.hub_dir)
    before = (store.list_refs(REPO), _objects(server.hub_dir))
    url = f"{server.url}/api/kernels/{REPO}/commit/v1"
    body = (json.dumps({"key": "header", "value": {"summary": "x"}}) + "\n" + json.dumps(
        {"key": "file", "value": {"path": "evil.txt", "content": "ZXZpbA==",
                                  "encoding": "base64"}}) + "\n").encode()
    for token, status in ((None, 401), ("hf_wrong_token_123", 401), (READ_TOKEN, 403)):
        assert _post(url, body, token) == status
        assert _post(f"{server.url}/api/kernels/{REPO}/tag/v1", b'{"tag": "v1.0.0"}',
                     token) == status
        assert _post(f"{server.url}/api/kernels/{REPO}/branch/v9", b"{}", token) == status
    assert (store.list_refs(REPO), _objects(server.hub_dir)) == before
    assert store.resolve(REPO, "v1") == first["commit"]
    assert _post(url, body, WRITE_TOKEN) == 200  # the same request with a write token


def _post(url: str, body: bytes, token: str | None) -> int:
    req = urllib.request.Request(url, data=body, method="POST")
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return int(resp.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


KILLED_CLIENT = """
import base64, http.client, json, sys, time, urllib.parse
url = urllib.parse.urlparse(sys.argv[1])
content = base64.b64encode(b"x" * (32 << 20))  # a 32 MiB file, as huggingface_hub sends it
body = (json.dumps({"key": "header", "value": {"summary": "big"}}) + "\\n").encode()
body += b'{"key": "file", "value": {"content": "' + content + b'", "path": "build/big.bin", ' \\
        b'"encoding": "base64"}}\\n'
conn = http.client.HTTPConnection(url.hostname, url.port)
conn.putrequest("POST", url.path)
conn.putheader("Authorization", "Bearer " + sys.argv[2])
conn.putheader("Content-Type", "application/x-ndjson")
conn.putheader("Content-Length", str(len(body)))
conn.endheaders()
conn.send(body[: len(body) // 2])
print("half sent", flush=True)
time.sleep(120)
"""


def test_d_client_killed_mid_upload(server: HubServer, tmp_path: Path) -> None:
    first = publish(server, tmp_path)
    store = LocalGitHub(server.hub_dir)
    refs = store.list_refs(REPO)
    client = subprocess.Popen(
        [sys.executable, "-c", KILLED_CLIENT, f"{server.url}/api/kernels/{REPO}/commit/v1",
         WRITE_TOKEN], stdout=subprocess.PIPE, text=True)
    assert client.stdout is not None and client.stdout.readline().strip() == "half sent"
    scratch = server.hub_dir / ".kernelkit-serve" / "tmp"
    _wait_for(lambda: any(p.stat().st_size > 0 for p in scratch.glob("*/body.ndjson")))
    client.send_signal(signal.SIGKILL)
    client.wait()
    client.stdout.close()
    _wait_for(lambda: not any(scratch.iterdir()))  # the server dropped the partial body
    _wait_for(lambda: "the client went away; nothing was written" in server.log.read_text())
    assert store.list_refs(REPO) == refs
    # still readable through huggingface_hub, and the next upload works
    env = client_env(server, tmp_path, token=None) | {"KERNELKIT_TRUSTED_PUBLISHERS": "acme"}
    assert run([sys.executable, "-c", LOAD_KERNELKIT], env).stdout.strip() == "[2.0, 2.0]"
    second = publish(server, tmp_path, factor=3.0)
    assert second["status"] == "uploaded" and second["commit"] != first["commit"]
    assert store.resolve(REPO, "v1") == second["commit"]


def _wait_for(cond: object, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():  # type: ignore[operator]
            return
        time.sleep(0.05)
    raise AssertionError("timed out")


def test_http_details_ranges_etags_and_paths(server: HubServer, tmp_path: Path) -> None:
    result = publish(server, tmp_path)
    store = LocalGitHub(server.hub_dir)
    commit = str(result["commit"])
    entry = next(e for e in store.list_files(REPO, commit) if e.path.endswith("/_ops.py"))
    data = store.read_file(REPO, commit, entry.path)
    assert data is not None
    url = f"{server.url}/kernels/{REPO}/resolve/v1/{entry.path}"
    with urllib.request.urlopen(urllib.request.Request(url, method="HEAD")) as resp:
        assert resp.headers["ETag"] == f'"{entry.blob_id}"'
        assert resp.headers["X-Repo-Commit"] == commit
        assert int(resp.headers["Content-Length"]) == len(data) and resp.read() == b""
    req = urllib.request.Request(url, headers={"Range": "bytes=5-14"})
    with urllib.request.urlopen(req) as resp:
        assert resp.status == 206 and resp.read() == data[5:15]
        assert resp.headers["Content-Range"] == f"bytes 5-14/{len(data)}"
    for bad in (f"/kernels/{REPO}/resolve/v1/..%2F..%2F..%2Fetc%2Fpasswd",
                f"/kernels/{REPO}/resolve/v1/build/..%2F..%2Fconfig",
                "/kernels/acme/..%2F..%2Fetc/resolve/main/passwd",
                "/api/kernels/../acme/refs", f"/api/kernels/{REPO}/tree/HEAD~1",
                f"/kernels/{REPO}/resolve/v1/.git/config"):
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(server.url + bad)
        assert err.value.code in (400, 404), bad
    # concurrent requests: many downloads at once all succeed
    from concurrent.futures import ThreadPoolExecutor

    def fetch(_: int) -> bytes:
        with urllib.request.urlopen(url) as resp:
            return bytes(resp.read())
    with ThreadPoolExecutor(16) as pool:
        assert set(pool.map(fetch, range(64))) == {data}


def test_redirect_in_kernel_status_toml_is_followed(server: HubServer, tmp_path: Path) -> None:
    publish(server, tmp_path)  # acme/demo v1, factor 2
    status = tmp_path / "kernel-status.toml"
    status.write_text('kind = "redirect"\ndestination = "acme/demo"\nrevision = "v1"\n')
    from kernelkit.hub.hf import HuggingFaceHub

    hub = HuggingFaceHub(token=WRITE_TOKEN, endpoint=server.url)
    hub.publish("acme/old", "v1", {"kernel-status.toml": status})
    code = ("import warnings, torch, kernelkit\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    k = kernelkit.get_kernel('acme/old', version=1)\n"
            "print([str(x.message) for x in w if 'redirected' in str(x.message)])\n"
            "print(k.scale(torch.ones(2)).tolist())\n")
    env = client_env(server, tmp_path, token=None) | {"KERNELKIT_TRUSTED_PUBLISHERS": "acme"}
    lines = run([sys.executable, "-c", code], env).stdout.strip().splitlines()
    assert lines == ["[\"'acme/old' redirected to 'acme/demo'\"]", "[2.0, 2.0]"]
    # (upstream kernels 0.17.2 ships kernels/status.py but never calls it, so it does not
    # follow redirects; nothing to check there)
