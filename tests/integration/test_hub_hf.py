"""HuggingFaceHub against a loopback TEST DOUBLE of the Hugging Face Hub API.

The public Hub cannot be reached from here, so this file runs a small HTTP server on 127.0.0.1
that answers the Hub API endpoints ``huggingface_hub`` calls for repo type ``kernel``
(``/api/kernels/<repo>[/revision|/refs|/tree|/branch|/tag|/preupload|/commit]``,
``/kernels/<repo>/resolve/...``, ``/api/repos/create``), storing the repositories in a real
``LocalGitHub``. It is a stand-in for the unreachable public Hub, not a model of it: only the
fields huggingface_hub reads are returned. The real ``huggingface_hub.HfApi`` is the client.
"""

from __future__ import annotations

import base64
import json
import tempfile
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

import pytest

from kernelkit.errors import HubError, RevisionNotFoundError
from kernelkit.hub import open_hub
from kernelkit.hub.hf import HuggingFaceHub
from kernelkit.hub.local import LocalGitHub
from kernelkit.hub.publish import upload
from tests.helpers import make_variant

pytest.importorskip("huggingface_hub")

REPO = "acme/demo"
CPU = "torch213-cxx11-cpu-x86_64-linux"


class HubDouble(BaseHTTPRequestHandler):
    store: LocalGitHub

    def log_message(self, *args: Any) -> None:
        pass

    # --- plumbing --------------------------------------------------------------------------
    def _send(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None,
              ctype: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, data: Any, status: int = 200) -> None:
        self._send(status, json.dumps(data).encode())

    def _error(self, status: int, code: str) -> None:
        self._send(status, json.dumps({"error": code}).encode(), {"X-Error-Code": code})

    def _body(self) -> bytes:
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _route(self) -> tuple[str, str, list[str], dict[str, list[str]]]:
        url = urlparse(self.path)
        parts = [unquote(p) for p in url.path.strip("/").split("/")]
        if parts[:2] == ["api", "kernels"]:
            return "api", f"{parts[2]}/{parts[3]}", parts[4:], parse_qs(url.query)
        if parts[:1] == ["kernels"]:
            return "file", f"{parts[1]}/{parts[2]}", parts[3:], {}
        return "other", "", parts, {}

    def _resolve(self, repo: str, rev: str) -> str | None:
        if not self.store.repo_exists(repo):
            self._error(404, "RepoNotFound")
            return None
        try:
            return self.store.resolve(repo, rev)
        except RevisionNotFoundError:
            self._error(404, "RevisionNotFound")
            return None

    # --- reads -----------------------------------------------------------------------------
    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        kind, repo, rest, query = self._route()
        if kind == "file" and rest[:1] == ["resolve"]:
            return self._file(repo, rest[1], "/".join(rest[2:]))
        if kind != "api":
            return self._error(404, "NotFound")
        if rest == ["refs"]:
            if not self.store.repo_exists(repo):
                return self._error(404, "RepoNotFound")
            refs = self.store.list_refs(repo)
            kinds = (("heads", refs.branches), ("tags", refs.tags))
            ref = [{"name": n, "ref": f"refs/{k}/{n}", "targetCommit": c}
                   for k, d in kinds for n, c in d.items()]
            return self._json({"branches": [r for r in ref if "/heads/" in r["ref"]],
                               "tags": [r for r in ref if "/tags/" in r["ref"]], "converts": []})
        if rest[:1] == ["tree"]:
            return self._tree(repo, rest[1], "/".join(rest[2:]), query)
        rev = rest[1] if rest[:1] == ["revision"] else "main"
        sha = self._resolve(repo, rev)
        if sha is not None:
            self._json({"id": repo, "sha": sha, "private": False})

    def _tree(self, repo: str, rev: str, path: str, query: dict[str, list[str]]) -> None:
        sha = self._resolve(repo, rev)
        if sha is None:
            return None
        recursive = query.get("recursive", ["false"])[0].lower() == "true"
        files = self.store.list_files(repo, sha, path)
        if path and not files:
            return self._error(404, "EntryNotFound")
        start = len(path) + 1 if path else 0
        out: list[dict[str, Any]] = []
        dirs: set[str] = set()
        for f in files:
            rel = f.path[start:]
            if recursive or "/" not in rel:
                out.append({"type": "file", "oid": f.blob_id, "size": f.size, "path": f.path})
            parts = rel.split("/")[:-1]
            for i in range(1, len(parts) + 1 if recursive else min(1, len(parts)) + 1):
                dirs.add(f.path[:start] + "/".join(parts[:i]))
        out += [{"type": "directory", "oid": "0" * 40, "size": 0, "path": d} for d in sorted(dirs)]
        self._json(out)

    def _file(self, repo: str, rev: str, path: str) -> None:
        sha = self._resolve(repo, rev)
        if sha is None:
            return None
        data = self.store.read_file(repo, sha, path)
        if data is None:
            return self._error(404, "EntryNotFound")
        blob = next(f.blob_id for f in self.store.list_files(repo, sha, path))
        self._send(200, data, {"X-Repo-Commit": sha, "ETag": f'"{blob}"'},
                   ctype="application/octet-stream")

    # --- writes ----------------------------------------------------------------------------
    def do_POST(self) -> None:
        kind, repo, rest, _ = self._route()
        body = self._body()
        if kind == "other" and rest == ["api", "repos", "create"]:
            req = json.loads(body)
            repo = f"{req['organization']}/{req['name']}"
            if not self.store.repo_exists(repo):
                self._commit_files(repo, "main", {".gitattributes": b"*.so binary\n"}, ())
            return self._json({"url": f"http://{self.headers['Host']}/kernels/{repo}",
                               "name": repo})
        if rest[:1] == ["branch"]:
            main = self.store.resolve(repo, "main")
            self.store.repo(repo).update_ref(f"refs/heads/{rest[1]}", main, None)
            return self._json({})
        if rest[:1] == ["tag"]:
            self.store.tag(repo, json.loads(body)["tag"], rest[1])
            return self._json({})
        if rest[:1] == ["preupload"]:
            files = json.loads(body)["files"]
            return self._json({"files": [{"path": f["path"], "uploadMode": "regular",
                                          "shouldIgnore": False} for f in files]})
        if rest[:1] == ["commit"]:
            return self._commit(repo, rest[1], body)
        self._error(404, "NotFound")

    def _commit(self, repo: str, branch: str, body: bytes) -> None:
        lines = [json.loads(x) for x in body.decode().splitlines() if x.strip()]
        header = next(x["value"] for x in lines if x["key"] == "header")
        if header.get("parentCommit") and header["parentCommit"] != self.store.resolve(repo,
                                                                                      branch):
            return self._error(412, "ParentCommitMismatch")
        adds = {x["value"]["path"]: base64.b64decode(x["value"]["content"])
                for x in lines if x["key"] == "file"}
        deletes = tuple(x["value"]["path"] for x in lines if x["key"] == "deletedFile")
        commit = self._commit_files(repo, branch, adds, deletes)
        self._json({"commitOid": commit,
                    "commitUrl": f"http://{self.headers['Host']}/kernels/{repo}/commit/{commit}",
                    "pullRequestUrl": None})

    def _commit_files(self, repo: str, branch: str, adds: dict[str, bytes],
                      deletes: tuple[str, ...]) -> str:
        with tempfile.TemporaryDirectory() as tmp:
            files = {}
            for i, (p, data) in enumerate(adds.items()):
                (Path(tmp) / str(i)).write_bytes(data)
                files[p] = Path(tmp) / str(i)
            return self.store.publish(repo, branch, files, delete_prefixes=deletes)


@pytest.fixture
def endpoint(tmp_path: Path) -> Iterator[tuple[str, LocalGitHub]]:
    store = LocalGitHub(tmp_path / "double-store")
    handler = type("Handler", (HubDouble,), {"store": store})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", store
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def hf_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)


def test_upload_and_read_through_huggingface_hub(endpoint: tuple[str, LocalGitHub],
                                                tmp_path: Path, hf_env: None) -> None:
    url, store = endpoint
    hub = open_hub("hf", env={"HF_ENDPOINT": url, "HF_TOKEN": "hf_test"})
    assert isinstance(hub, HuggingFaceHub) and not hub.repo_exists(REPO)
    build = tmp_path / "p" / "build"
    make_variant(build, CPU)
    result = upload(build, hub, repo_id=REPO, tag="v1.0.0")
    assert result.changed and store.resolve(REPO, "v1") == result.commit
    assert store.resolve(REPO, "v1.0.0") == result.commit
    assert hub.list_refs(REPO).branches["v1"] == result.commit
    assert hub.resolve(REPO, "v1.0.0") == result.commit
    assert hub.list_dirs(REPO, result.commit) == [CPU]
    entries = {e.path: e for e in hub.list_files(REPO, result.commit, "build")}
    local = {e.path: e for e in store.list_files(REPO, result.commit, "build")}
    assert entries == local
    paths = sorted(entries)
    hub.fetch(REPO, result.commit, paths, tmp_path / "out")
    for p in paths:
        assert (tmp_path / "out" / p).read_bytes() == (build.parent / p).read_bytes()
    assert hub.read_file(REPO, result.commit, f"build/{CPU}/_ops.py") == \
        (build / CPU / "_ops.py").read_bytes()
    assert hub.read_file(REPO, result.commit, "kernel-status.toml") is None
    # Same tree again: no commit; a tag never moves.
    assert not upload(build, hub, repo_id=REPO).changed
    (build / CPU / "extra.py").write_text("")
    (build / CPU / "metadata.json").unlink()
    make_variant(build, CPU, factor=4.0)
    second = upload(build, hub, repo_id=REPO)
    assert second.changed and store.resolve(REPO, "v1") == second.commit
    with pytest.raises(HubError, match="tags never move"):
        hub.tag(REPO, "v1.0.0", second.commit)
    with pytest.raises(RevisionNotFoundError):
        hub.resolve(REPO, "v9")
    with pytest.raises(HubError, match="not found"):
        hub.list_refs("acme/missing")


def test_stale_parent_commit_is_rejected(endpoint: tuple[str, LocalGitHub], tmp_path: Path,
                                         hf_env: None) -> None:
    url, store = endpoint
    hub = HuggingFaceHub(token="hf_test", endpoint=url)
    (tmp_path / "a").write_text("a")
    first = hub.publish(REPO, "v1", {"a": tmp_path / "a"})
    store.publish(REPO, "v1", {"b": tmp_path / "a"})  # someone else moves the branch
    from huggingface_hub import CommitOperationAdd

    with pytest.raises(HubError), hub._errors(REPO, "v1"):
        hub.api.create_commit(REPO, [CommitOperationAdd("c", str(tmp_path / "a"))],
                              commit_message="m", repo_type="kernel", revision="v1",
                              parent_commit=first)


def test_unreachable_endpoint_is_a_hub_error() -> None:
    # the real huggingface_hub client against a closed local port (nothing listens on 9)
    with pytest.raises(HubError, match="cannot reach"):
        HuggingFaceHub(endpoint="http://127.0.0.1:9").list_refs("org/name")
