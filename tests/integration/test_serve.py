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


# --- issue 24: hardening of serve -----------------------------------------------------------


def request(server: HubServer, method: str, path: str, body: bytes | None = None,
            token: str | None = WRITE_TOKEN) -> tuple[int, dict[str, str], bytes]:
    """One raw request (``path`` already URL-quoted): status, headers and body. A connection
    the server drops raises, so every caller also checks that the server answered."""
    import http.client
    from urllib.parse import urlparse

    where = urlparse(server.url)
    conn = http.client.HTTPConnection(where.hostname, where.port, timeout=30)
    try:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        conn.request(method, path, body=body, headers=headers)
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


def ndjson(summary: object, *ops: dict[str, object]) -> bytes:
    lines = [{"key": "header", "value": {"summary": summary}}, *ops]
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def add(path: str, data: bytes = b"x") -> dict[str, object]:
    import base64

    return {"key": "file", "value": {"path": path, "encoding": "base64",
                                     "content": base64.b64encode(data).decode()}}


def test_a_file_directory_clash_is_refused_with_the_path_and_loses_nothing(
        server: HubServer, tmp_path: Path) -> None:
    """Issue 24 item 6: a commit adding file ``build`` deleted the ``build/`` tree, and ``q``
    with ``q/r`` in one commit dropped ``q`` (both 200). The store now builds trees with the
    local hub's one tree builder: 409 naming the path, nothing committed."""
    from huggingface_hub import CommitOperationAdd, HfApi
    from huggingface_hub.errors import HfHubHTTPError

    from kernelkit.errors import TreeClashError

    publish(server, tmp_path)
    store = LocalGitHub(server.hub_dir)
    head = store.resolve(REPO, "v1")
    files = sorted(e.path for e in store.list_files(REPO, head))
    api = HfApi(endpoint=server.url, token=WRITE_TOKEN)
    (tmp_path / "x").write_bytes(b"x")
    for paths, clash in ((["build"], "build"), (["q", "q/r"], "q"),
                         (["build/new.py", f"build/{CPU}/_ops.py/x"], f"build/{CPU}/_ops.py")):
        ops = [CommitOperationAdd(p, str(tmp_path / "x")) for p in paths]
        with pytest.raises(HfHubHTTPError) as err:
            api.create_commit(REPO, ops, commit_message="clash", repo_type="kernel",
                              revision="v1")
        assert err.value.response.status_code == 409
        assert repr(clash) in err.value.response.json()["error"]
        assert err.value.response.json()["path"] == clash
    assert store.resolve(REPO, "v1") == head
    assert sorted(e.path for e in store.list_files(REPO, head)) == files
    # the local hub applies the very same rule (one tree builder for both)
    with pytest.raises(TreeClashError) as local:
        store.publish(REPO, "v1", {"q": tmp_path / "x", "q/r": tmp_path / "x"})
    assert local.value.path == "q"
    # deleting the directory in the same commit makes room for the file
    status, _, _ = request(server, "POST", f"/api/kernels/{REPO}/commit/v1", ndjson(
        "replace", {"key": "deletedFolder", "value": {"path": "build/"}}, add("build")))
    assert status == 200
    assert [e.path for e in store.list_files(REPO, store.resolve(REPO, "v1"))] == ["build"]


def test_request_fields_are_validated_never_a_500_or_a_dropped_connection(
        server: HubServer, tmp_path: Path) -> None:
    """Issue 24 item 12, each reproduction: a cursor of non-ASCII digits, a NUL in a path or
    revision (once a NUL in a response header: a dropped connection), a 100k-deep JSON body,
    a NUL in a commit summary, a tag request without a tag (created ``None``), a branch named
    ``HEAD``. Every field is checked by its kind's validator (``serve/fields.py``)."""
    publish(server, tmp_path)
    store = LocalGitHub(server.hub_dir)
    head = store.resolve(REPO, "v1")
    deep = b"[" * 100_000 + b"]" * 100_000
    cases = [
        ("GET", f"/api/kernels/{REPO}/tree/v1?cursor=%C2%B9", None, 400, "cursor"),
        ("GET", f"/api/kernels/{REPO}/tree/v1?recursive=maybe", None, 400, "recursive"),
        ("GET", f"/kernels/{REPO}/resolve/v1/%00", None, 404, "invalid path"),
        ("GET", f"/kernels/{REPO}/resolve/%00/x", None, 404, "not found"),
        ("GET", f"/api/kernels/{REPO}/revision/v1%0D%0AX-Evil:%201", None, 404, "not found"),
        ("GET", "/api/kernels/acme%00/demo/refs", None, 404, "not found"),
        ("POST", f"/api/kernels/{REPO}/branch/x", deep, 400, "deeper"),
        ("POST", "/api/repos/create", b'{"name": "x", "organization": ' + deep + b"}", 400,
         "deeper"),
        ("POST", f"/api/kernels/{REPO}/commit/v1", ndjson("a\0b", add("z")), 400, "summary"),
        ("POST", f"/api/kernels/{REPO}/commit/v1", ndjson({"x": 1}, add("z")), 400, "summary"),
        ("POST", f"/api/kernels/{REPO}/commit/v1", ndjson("\udcff", add("z")), 400, "summary"),
        ("POST", f"/api/kernels/{REPO}/commit/v1", ndjson("s", add("\udcffz")), 400, "path"),
        ("POST", f"/api/kernels/{REPO}/commit/v1", b'{"key": "header", "value": '
         + b"[" * 5000 + b"]" * 5000 + b"}\n", 400, "deeper"),  # one ndjson line, < 64 KiB
        ("POST", f"/api/kernels/{REPO}/tag/v1", b"{}", 400, "tag"),
        ("POST", f"/api/kernels/{REPO}/tag/v1", b'{"tag": 7}', 400, "tag"),
        ("POST", f"/api/kernels/{REPO}/branch/HEAD", b"{}", 400, "HEAD"),
        ("POST", f"/api/kernels/{REPO}/branch/head", b"{}", 400, "head"),
        ("POST", f"/api/kernels/{REPO}/branch/deadbeef", b"{}", 400, "deadbeef"),
        ("POST", f"/api/kernels/{REPO}/branch/refs%2Fheads%2Fx", b"{}", 400, "refs/heads"),
        ("POST", f"/api/kernels/{REPO}/branch/y", b'{"startingPoint": ["v1"]}', 400,
         "startingPoint"),
        ("POST", "/api/repos/create", b'{"name": "x"}', 400, "organization"),
        ("POST", f"/api/kernels/{REPO}/preupload/v1", b'{"files": [{"path": 1}]}', 400, "path"),
        ("POST", f"/api/kernels/{REPO}/commit/v1?create_pr=2", ndjson("s", add("z")), 400,
         "create_pr"),
    ]
    for method, path, body, status, says in cases:
        got, headers, answer = request(server, method, path, body)
        assert got == status, (path, got, answer)
        assert says in json.loads(answer)["error"], (path, answer)
        assert headers["x-error-message"].isascii(), headers
    refs = store.list_refs(REPO)
    assert refs.tags == {} and sorted(refs.branches) == ["main", "v1"]  # no tag None, no HEAD
    assert refs.branches["v1"] == head
    assert "Traceback" not in server.log.read_text()


def test_revision_forms_huggingface_hub_sends(server: HubServer, tmp_path: Path) -> None:
    """Issue 22 item 5: short and full refs, URL-encoded or not, and ``refs/pr/N``."""
    from huggingface_hub import HfApi

    first = publish(server, tmp_path, "--tag", "v1.0.0")
    pr = publish(server, tmp_path, "--create-pr", factor=5.0)
    pr_commit = str(pr["commit"])
    api = HfApi(endpoint=server.url, token=WRITE_TOKEN)
    for revision, commit in (("v1", first["commit"]), ("refs/heads/v1", first["commit"]),
                             ("v1.0.0", first["commit"]), ("refs/tags/v1.0.0", first["commit"]),
                             ("refs/pr/1", pr_commit), (str(first["commit"])[:12],
                                                        first["commit"])):
        assert api.repo_info(REPO, repo_type="kernel", revision=revision).sha == commit
        tree = api.list_repo_tree(REPO, repo_type="kernel", revision=revision, path_in_repo="build")
        assert [f.path for f in tree] == [f"build/{CPU}"]
        local = api.hf_hub_download(REPO, f"build/{CPU}/metadata.json", repo_type="kernel",
                                    revision=revision, local_dir=tmp_path / "dl")
        assert Path(local).is_file()
    for raw in ("refs/heads/v1", "refs%2Fheads%2Fv1", "refs/tags/v1.0.0", "refs/pr/1"):
        status, _, _ = request(server, "GET", f"/api/kernels/{REPO}/tree/{raw}/build")
        assert status == 200, raw
        status, _, _ = request(server, "GET", f"/kernels/{REPO}/resolve/{raw}/build/{CPU}/"
                               "metadata.json")
        assert status == 200, raw
    from huggingface_hub.errors import RevisionNotFoundError

    for missing in ("refs/heads/v9", "refs/tags/v1", "refs/heads/v1.0.0", "refs/pr/9",
                    "refs/remotes/v1", "refs/heads/../v1"):
        with pytest.raises(RevisionNotFoundError):
            api.repo_info(REPO, repo_type="kernel", revision=missing)
    # commits go to a branch by either name, never to a tag
    status, _, _ = request(server, "POST", f"/api/kernels/{REPO}/commit/refs%2Fheads%2Fv1",
                           ndjson("by full ref", add("extra.txt")))
    assert status == 200
    status, _, _ = request(server, "POST", f"/api/kernels/{REPO}/commit/refs%2Ftags%2Fv1.0.0",
                           ndjson("to a tag", add("extra2.txt")))
    assert status == 400


UPSTREAM_LOAD = """
import torch, kernels
k = kernels.get_kernel("acme/demo", version=1)
print(k.scale(torch.ones(2)).tolist())
"""


def test_upstream_kernels_0_19_commands_through_serve(server: HubServer, tmp_path: Path) -> None:
    """Issue 22 item 5: upstream kernels 0.19.1's ``variants`` (latest, ``--all-versions``,
    ``--json``, ``--revision``), ``versions``, ``info``, ``lock``, ``download`` and
    ``get_kernel`` against a real ``kernelkit serve`` (they ask for ``refs/heads/v1``)."""
    kernels = pytest.importorskip("kernels")
    from importlib.metadata import version

    if version("kernels") < "0.19":
        pytest.skip(f"kernels {kernels.__name__} {version('kernels')} is older than 0.19")
    publish(server, tmp_path, "--tag", "v1.0.0")
    second = publish(server, tmp_path, "--tag", "v1.1.0", factor=3.0)
    env = client_env(server, tmp_path, token=None)
    cli = str(Path(sys.executable).parent / "kernels")
    out = run([cli, "variants", REPO], env).stdout
    assert out.startswith("Version 1:") and CPU in out
    report = json.loads(run([cli, "variants", REPO, "--all-versions", "--json"], env).stdout)
    assert report["repo_id"] == REPO
    assert [r["revision"] for r in report["revisions"]] == ["refs/heads/v1"]
    assert report["revisions"][0]["variants"][0]["variant"] == CPU
    assert CPU in run([cli, "variants", REPO, "--revision", "v1.0.0"], env).stdout
    versions = run([cli, "versions", REPO], env).stdout  # deprecated: variants --all-versions
    assert versions.startswith("Version 1:") and CPU in versions
    info = json.loads(run([cli, "info", REPO, "--version", "1", "--json"], env).stdout)
    assert info["variant"] == CPU and info["repo_id"] == REPO
    app = tmp_path / "app"
    app.mkdir()
    (app / "pyproject.toml").write_text('[project]\nname = "app"\nversion = "0"\n\n'
                                        '[tool.kernels.dependencies]\n"acme/demo" = 1\n')
    run([cli, "lock", str(app)], env)
    [lock] = json.loads((app / "kernels.lock").read_text())
    assert lock["lock"]["commit"] == second["commit"]
    run([cli, "download", str(app)], env)
    assert run([sys.executable, "-c", UPSTREAM_LOAD], env).stdout.strip() == "[3.0, 3.0]"
    log = server.log.read_text()
    assert "refs%2Fheads%2Fv1" in log and " 500 " not in log and "Traceback" not in log


CRASH_BETWEEN_COMMIT_AND_TAG = """
import pathlib, sys, time
import huggingface_hub.hf_api as hf_api

def stop_here(self, *args, **kwargs):  # the instant between the commit and the tag
    pathlib.Path(sys.argv[1]).write_text("committed")
    time.sleep(300)

hf_api.HfApi.create_tag = stop_here
from kernelkit.cli.main import main
sys.exit(main(sys.argv[2:]))
"""


def test_upload_killed_between_commit_and_tag_is_repaired_by_the_next_upload(
        server: HubServer, tmp_path: Path) -> None:
    """Issue 24 item 14: ``upload --hub hf --tag`` killed (-9) right after its commit left
    ``v1`` without ``v1.0.0``. The Hub API cannot move a branch and a tag together, so the
    commit names its tag (``Kernelkit-Tag:``) and the next upload, of any build, creates it."""
    store = LocalGitHub(server.hub_dir)
    mark = tmp_path / "committed"
    env = client_env(server, tmp_path) | {"PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"}
    crashing = subprocess.Popen(
        [sys.executable, "-c", CRASH_BETWEEN_COMMIT_AND_TAG, str(mark), "upload",
         str(project(tmp_path)), "--hub", "hf", "--repo-id", REPO, "--tag", "v1.0.0"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_for(mark.exists, timeout=120)
    finally:
        crashing.send_signal(signal.SIGKILL)
        crashing.wait()
    crashed = store.resolve(REPO, "v1")
    assert store.list_refs(REPO).tags == {}  # the reported state: v1 without v1.0.0
    code = ("import torch, kernelkit\n"
            "k = kernelkit.get_kernel('acme/demo', version='==1.0.0')\n"
            "print(k.scale(torch.ones(2)).tolist())\n")
    load = client_env(server, tmp_path, token=None) | {"KERNELKIT_TRUSTED_PUBLISHERS": "acme"}
    missing = run([sys.executable, "-c", code], load, check=False)  # until the repair: missing
    assert missing.returncode != 0 and "VersionNotFoundError" in missing.stderr
    second = publish(server, tmp_path, factor=3.0)  # another build, no --tag
    assert store.list_refs(REPO).tags == {"v1.0.0": crashed}
    assert store.resolve(REPO, "v1") == second["commit"] != crashed
    # the repaired tag loads what was uploaded with it
    assert run([sys.executable, "-c", code], load).stdout.strip() == "[2.0, 2.0]"
    # a tag of another major on a branch's head, or one that exists, is never made or moved
    from kernelkit.hub.hf import HuggingFaceHub

    hub = HuggingFaceHub(token=WRITE_TOKEN, endpoint=server.url)
    (tmp_path / "note").write_text("n")
    from huggingface_hub import CommitOperationAdd

    hub.api.create_commit(REPO, [CommitOperationAdd("note", str(tmp_path / "note"))],
                          commit_message="m", repo_type="kernel", revision="v1",
                          commit_description="Kernelkit-Tag: v2.0.0\nKernelkit-Tag: v1.0.0\n"
                                             "Kernelkit-Tag: v1.0.0\nx")
    assert hub.repair_tags(REPO) == []
    assert store.list_refs(REPO).tags == {"v1.0.0": crashed}


@pytest.mark.parametrize("option", [["--max-connections", "0"], ["--header-timeout", "0"],
                                    ["--body-timeout", "-1"]])
def test_serve_refuses_limits_that_would_disable_themselves(option: list[str],
                                                            tmp_path: Path) -> None:
    proc = kernelkit("serve", "--hub", str(tmp_path / "hub"), *option, env=dict(os.environ),
                     check=False)
    assert proc.returncode == 2 and proc.stderr.startswith("error: "), proc.stderr
    assert not (tmp_path / "hub").exists()
