"""Fuzzing ``kernelkit serve``'s request fields (issue 24 item 12) against a real server.

Every field a client controls (repository id, revision, path, query parameters, JSON bodies
of every write endpoint, the ndjson commit body: header texts and operations) is drawn by
hypothesis and sent over a real connection to a real ``kernelkit serve`` on 127.0.0.1 (what
uvicorn and h11 do with a response header matters: a NUL there used to drop the connection).
Every answer must be an answer: no 5xx, no dropped connection, an ASCII ``X-Error-Message``
and a JSON ``{"error"}`` body on errors; afterwards the repository holds no ref a client could
not have created by the rules (``HEAD``, ``None``, ...). ``CONFIG.fuzz_examples`` each.
"""

from __future__ import annotations

import base64
import http.client
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest

hypothesis = pytest.importorskip("hypothesis")
pytest.importorskip("uvicorn")
from hypothesis import (  # noqa: E402
    HealthCheck,
    given,
    settings,
    strategies as st,
)

from kernelkit.hub.local import LocalGitHub  # noqa: E402
from kernelkit.hub.names import check_ref_name  # noqa: E402
from tests.hubserver import WRITE_TOKEN, HubServer, run_server  # noqa: E402
from tests.reliability.common import CONFIG  # noqa: E402

FUZZ = settings(max_examples=CONFIG.fuzz_examples, deadline=None, database=None,
                suppress_health_check=list(HealthCheck))
REPO = "acme/demo"

NASTY = st.sampled_from(["", "\n", "\r\n", "\0", "..", "/", "\\", "%00", "%2F", "\udcff", "💥",
                         "¹", "٣", "a" * 300, "1" * 5000, "-rf", "HEAD", "head", "HEAD~1",
                         ":x", "refs/heads/v1", "refs/tags/v1.0.0", "refs/pr/1", "refs/pr/0",
                         "refs/heads/", "v1", "main", "v1.0.0", "deadbeef", "None", "null",
                         ".git", "build", "build/", "a\x7fb", "x\ty"])
FIELD = st.one_of(NASTY, st.text(max_size=30),
                  st.from_regex(r"[a-zA-Z0-9./_+%-]{0,30}", fullmatch=True))
SCALAR = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), FIELD)
JSON = st.recursive(SCALAR, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(FIELD, inner, max_size=3)), max_leaves=8)
DEEP = st.integers(30, 20_000).map(lambda n: b"[" * n + b"]" * n)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubServer]:
    tmp = tmp_path_factory.mktemp("fuzz-serve")
    (tmp / "f").write_text("x")
    hub = LocalGitHub(tmp / "hub")
    hub.publish(REPO, "v1", {"build/torch-cpu/a.py": tmp / "f", "README.md": tmp / "f"})
    hub.tag(REPO, "v1.0.0", hub.resolve(REPO, "v1"))
    with run_server(tmp / "hub", tmp, "--page-size", "2") as srv:
        yield srv
    refs = LocalGitHub(tmp / "hub").list_refs(REPO)
    for name in [*refs.branches, *refs.tags]:  # only names the rules allow were created
        if name not in ("main", "v1", "v1.0.0"):
            check_ref_name(name)


def segment(value: str) -> str:
    """``value`` as one URL segment (a lone surrogate as the bytes of its UTF-8 form)."""
    return quote(value.encode("utf-8", "surrogatepass"), safe="")


def send(server: HubServer, method: str, target: str, body: bytes | None = None) -> None:
    """One request; the server must answer it (no 5xx, no dropped connection)."""
    port = int(server.url.rsplit(":", 1)[1])
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        headers = {"Authorization": f"Bearer {WRITE_TOKEN}"}
        if target == "/-/login":
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        conn.request(method, target, body=body, headers=headers)
        resp = conn.getresponse()
        data = resp.read()
    finally:
        conn.close()
    assert resp.status < 500, (method, target, body and body[:200], resp.status, data[:300])
    message = resp.getheader("X-Error-Message")
    if resp.status >= 400 and method != "HEAD" and message is not None:
        assert message.isascii() and message.isprintable(), message
        assert "error" in json.loads(data), data[:300]


REPOS = st.one_of(st.just(REPO), st.tuples(FIELD, FIELD).map(lambda t: f"{t[0]}/{t[1]}"))


@st.composite
def read_requests(draw: st.DrawFn) -> tuple[str, str]:
    repo = "/".join(segment(p) for p in draw(REPOS).split("/", 1))
    rev, path = segment(draw(FIELD)), "/".join(segment(p) for p in draw(FIELD).split("/"))
    query = "&".join(f"{k}={segment(draw(FIELD))}" for k in draw(st.lists(st.sampled_from(
        ["cursor", "recursive", "expand", "include_prs"]), max_size=3)))
    kind = draw(st.sampled_from(["info", "rev", "refs", "tree", "commits", "resolve", "head",
                                 "org", "page", "page-tree", "raw", "index"]))
    targets = {
        "info": ("GET", f"/api/kernels/{repo}"),
        "rev": ("GET", f"/api/kernels/{repo}/revision/{rev}"),
        "refs": ("GET", f"/api/kernels/{repo}/refs?{query}"),
        "tree": ("GET", f"/api/kernels/{repo}/tree/{rev}/{path}?{query}"),
        "commits": ("GET", f"/api/kernels/{repo}/commits/{rev}?{query}"),
        "resolve": ("GET", f"/kernels/{repo}/resolve/{rev}/{path}"),
        "head": ("HEAD", f"/kernels/{repo}/resolve/{rev}/{path}"),
        "org": ("GET", f"/api/organizations/{segment(draw(FIELD))}/overview"),
        # the web pages (serve/pages.py): the same fields, and the search and fit queries
        "page": ("GET", f"/kernels/{repo}?compute={rev}&torch={segment(draw(FIELD))}"),
        "page-tree": ("GET", f"/kernels/{repo}/tree/{rev}"),
        "raw": ("GET", f"/kernels/{repo}/raw/{rev}/{path}"),
        "index": ("GET", f"/?q={rev}&{query}"),
    }
    return targets[kind]


@FUZZ
@given(read_requests())
def test_read_request_fields(server: HubServer, request: tuple[str, str]) -> None:
    send(server, *request)


def ndjson_body(header: dict[str, Any], ops: list[tuple[str, Any, Any]]) -> bytes:
    lines: list[Any] = [{"key": "header", "value": header}]
    for key, path, content in ops:
        value: dict[str, Any] = {"path": path}
        if key == "file":
            value.update(encoding="base64", content=content if isinstance(content, str)
                         else base64.b64encode(json.dumps(content).encode()).decode())
        lines.append({"key": key, "value": value})
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


@st.composite
def write_requests(draw: st.DrawFn) -> tuple[str, str, bytes]:
    repo = draw(st.one_of(st.just(REPO), REPOS))
    quoted = "/".join(segment(p) for p in repo.split("/", 1))
    rev = segment(draw(st.one_of(st.just("v1"), FIELD)))
    body = draw(st.one_of(JSON.map(lambda v: json.dumps(v).encode()), DEEP,
                          st.binary(max_size=64)))
    kind = draw(st.sampled_from(["create", "branch", "tag", "preupload", "commit", "yaml",
                                 "login"]))
    if kind == "login":  # the pages' sign-in form (a form body, or anything)
        form = f"token={segment(draw(FIELD))}&next={segment(draw(FIELD))}".encode()
        return "POST", "/-/login", draw(st.one_of(st.just(form), st.just(body)))
    if kind == "create":
        fields = {"organization": draw(JSON), "name": draw(JSON), "type": draw(JSON),
                  "visibility": draw(JSON)}
        body = draw(st.one_of(st.just(json.dumps(fields).encode()), st.just(body)))
        return "POST", "/api/repos/create", body
    if kind == "branch":
        name = segment(draw(FIELD))
        body = draw(st.one_of(st.just(json.dumps({"startingPoint": draw(JSON)}).encode()),
                              st.just(body)))
        return "POST", f"/api/kernels/{quoted}/branch/{name}", body
    if kind == "tag":
        body = draw(st.one_of(st.just(json.dumps({"tag": draw(JSON),
                                                  "message": draw(JSON)}).encode()),
                              st.just(body)))
        return "POST", f"/api/kernels/{quoted}/tag/{rev}", body
    if kind == "preupload":
        files = draw(st.one_of(JSON, st.lists(st.fixed_dictionaries({"path": JSON}),
                                                max_size=3)))
        body = draw(st.one_of(st.just(json.dumps({"files": files}).encode()), st.just(body)))
        return "POST", f"/api/kernels/{quoted}/preupload/{rev}", body
    if kind == "commit":
        header = {k: draw(JSON) for k in draw(st.lists(st.sampled_from(
            ["summary", "description", "parentCommit"]), max_size=3))}
        ops = draw(st.lists(st.tuples(
            st.sampled_from(["file", "deletedFile", "deletedFolder", "lfsFile", "other"]),
            st.one_of(FIELD, JSON), st.one_of(JSON, st.just("eA=="))), max_size=3))
        query = f"create_pr={segment(draw(FIELD))}" if draw(st.booleans()) else ""
        body = draw(st.one_of(st.just(ndjson_body(header, ops)), st.just(body)))
        return "POST", f"/api/kernels/{quoted}/commit/{rev}?{query}", body
    return "POST", "/api/validate-yaml", body


@FUZZ
@given(write_requests())
def test_write_request_fields(server: HubServer, request: tuple[str, str, bytes]) -> None:
    send(server, *request)


def test_zz_the_server_logged_no_traceback(server: HubServer) -> None:
    log = server.log.read_text(errors="replace")
    assert "Traceback" not in log and " 500 " not in log, log[-3000:]
