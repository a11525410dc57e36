"""The ASGI application: the Hugging Face Hub HTTP API subset for kernel repositories.

Endpoints (``{repo}`` is ``<org>/<name>``; revisions and paths are URL-quoted by the clients,
so the path is split on its *raw* ``/`` and each segment unquoted):

=====================================================  =========================================
``GET  /api/kernels/{repo}[/revision/{rev}]``          repository info (``sha`` at the revision)
``GET  /api/kernels/{repo}/refs[?include_prs=1]``      branches, tags, pull-request refs
``GET  /api/kernels/{repo}/tree/{rev}[/{path}]``       tree listing (``recursive``, paged with a
                                                       ``Link: <...>; rel="next"`` header)
``GET|HEAD /kernels/{repo}/resolve/{rev}/{path}``      a file: ``ETag`` (git blob id),
                                                       ``X-Repo-Commit``, byte ranges, streamed
``POST /api/repos/create``                             create (``visibility: private``)
``POST /api/kernels/{repo}/preupload/{rev}``           every file is a regular (non-LFS) upload
``POST /api/kernels/{repo}/commit/{rev}[?create_pr=1]``  one atomic commit (ndjson body)
``POST /api/kernels/{repo}/branch/{branch}``           create a branch (``startingPoint``)
``POST /api/kernels/{repo}/tag/{rev}``                 create a tag
``GET  /api/organizations/{org}/overview``             ``trustedKernelPublisher`` (upstream trust)
``POST /api/validate-yaml``                            README metadata: accepted, not validated
=====================================================  =========================================

Errors carry ``X-Error-Code`` (``RepoNotFound``, ``RevisionNotFound``, ``EntryNotFound``) and
``X-Error-Message``, which ``huggingface_hub`` turns into its typed exceptions.
"""

from __future__ import annotations

import contextlib
import json
import logging
import shutil
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlencode

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Route

from kernelkit.errors import (
    CommitBodyError,
    HubError,
    RefConflict,
    RevisionNotFoundError,
    ServeApiError,
)
from kernelkit.hub.names import check_repo_id, check_repo_path, is_ref_name
from kernelkit.serve.config import Access, ServeConfig
from kernelkit.serve.ndjson import read_commit
from kernelkit.serve.store import Entry, Store, parse_pr_ref

log = logging.getLogger("kernelkit.serve")

Handler = Callable[[Request, "Api", list[str]], Awaitable[Response]]


def error_response(exc: ServeApiError) -> Response:
    """The Hub API's error shape: JSON ``{"error": ...}`` plus ``X-Error-Message``/``-Code``."""
    headers = {"X-Error-Message": exc.message.encode("ascii", "replace").decode()}
    if exc.code:
        headers["X-Error-Code"] = exc.code
    return JSONResponse({"error": exc.message, **exc.extra}, exc.status, headers=headers)


def not_found(what: str, code: str) -> ServeApiError:
    return ServeApiError(404, what, code)


class Api:
    """The handlers, bound to one store and configuration."""

    def __init__(self, config: ServeConfig) -> None:
        self.config = config
        self.store = Store(config.hub_dir, config.blob_dir, ref_ttl=config.ref_ttl)
        self.scratch = self.store.root / ".kernelkit-serve" / "tmp"

    # --- access ----------------------------------------------------------------------------

    def access(self, request: Request) -> Access:
        access = self.config.access(request.headers.get("authorization"))
        if access is Access.INVALID:
            raise ServeApiError(401, "Invalid credentials in Authorization header")
        return access

    def can_write(self, request: Request) -> None:
        access = self.access(request)
        if access is Access.ANONYMOUS:
            raise ServeApiError(401, "a write token is required (Authorization: Bearer <token>)")
        if access is not Access.WRITE:
            raise ServeApiError(403, "this token may only read")

    async def readable(self, request: Request, repo_id: str) -> None:
        """Refuse before touching anything: bad id, unknown repo, token rules, privacy."""
        access = self.access(request)
        if access is Access.ANONYMOUS and self.config.read_requires_token:
            raise ServeApiError(401, "this hub needs a token to read (Authorization: Bearer ...)")
        try:
            check_repo_id(repo_id)
        except HubError:
            raise not_found(f"Repository {repo_id} not found", "RepoNotFound") from None
        exists, private = await run_in_threadpool(self._exists_private, repo_id)
        if not exists or (private and access is Access.ANONYMOUS):
            raise not_found(f"Repository {repo_id} not found", "RepoNotFound")

    def _exists_private(self, repo_id: str) -> tuple[bool, bool]:
        return self.store.exists(repo_id), self.store.is_private(repo_id)

    async def resolve(self, repo_id: str, revision: str, *, fresh: bool = False) -> str:
        try:
            return await run_in_threadpool(lambda: self.store.resolve(repo_id, revision,
                                                                      fresh=fresh))
        except (RevisionNotFoundError, HubError):
            raise not_found(f"Revision {revision} not found in {repo_id}",
                            "RevisionNotFound") from None


# --- reads ----------------------------------------------------------------------------------


async def repo_info(request: Request, api: Api, rest: list[str]) -> Response:
    repo_id = request.state.repo_id
    if rest and rest[0] != "revision":
        raise not_found("no such endpoint", "NotFound")
    await api.readable(request, repo_id)
    sha = await api.resolve(repo_id, "/".join(rest[1:]) if rest else "main")
    tree = await run_in_threadpool(api.store.tree, repo_id, sha)
    return JSONResponse({
        "id": repo_id, "author": repo_id.split("/")[0], "sha": sha,
        "private": api.store.is_private(repo_id),
        "siblings": [{"rfilename": e.path} for e in tree if e.kind == "blob"],
    })


async def refs(request: Request, api: Api, rest: list[str]) -> Response:
    repo_id = request.state.repo_id
    await api.readable(request, repo_id)
    info = await run_in_threadpool(api.store.refs, repo_id)
    body: dict[str, Any] = {
        "branches": [{"name": n, "ref": f"refs/heads/{n}", "targetCommit": c}
                     for n, c in sorted(info.branches.items())],
        "tags": [{"name": n, "ref": f"refs/tags/{n}", "targetCommit": c}
                 for n, c in sorted(info.tags.items())],
        "converts": [],
    }
    if request.query_params.get("include_prs") in ("1", "true", "True"):
        body["pullRequests"] = [{"name": r.rsplit("/", 1)[1], "ref": r, "targetCommit": c}
                                for r, c in sorted(info.pulls.items())]
    return JSONResponse(body)


def _listing(entries: list[Entry], path: str, recursive: bool) -> list[Entry]:
    prefix = f"{path}/" if path else ""
    if path and not any(e.path == path and e.kind == "tree" for e in entries):
        return []
    under = [e for e in entries if e.path.startswith(prefix)]
    return under if recursive else [e for e in under if "/" not in e.path[len(prefix):]]


async def tree(request: Request, api: Api, rest: list[str]) -> Response:
    repo_id = request.state.repo_id
    if not rest:
        raise not_found("no revision in the tree URL", "RevisionNotFound")
    await api.readable(request, repo_id)
    sha = await api.resolve(repo_id, rest[0])
    path = "/".join(rest[1:]).strip("/")
    if path:
        _checked_path(path)
    entries = await run_in_threadpool(api.store.tree, repo_id, sha)
    recursive = request.query_params.get("recursive", "").lower() in ("1", "true")
    listing = _listing(entries, path, recursive)
    if path and not listing:
        raise not_found(f"{path} is not a directory at {sha}", "EntryNotFound")
    start = _cursor(request.query_params.get("cursor"))
    page = listing[start:start + api.config.page_size]
    headers = {}
    if start + len(page) < len(listing):
        query = dict(request.query_params)
        query["cursor"] = str(start + len(page))
        url = request.url.replace(query=urlencode(query))
        headers["Link"] = f'<{url}>; rel="next"'
    return JSONResponse([_tree_item(e) for e in page], headers=headers)


def _cursor(text: str | None) -> int:
    if text is None:
        return 0
    if not text.isdigit():
        raise ServeApiError(400, "invalid cursor")
    return int(text)


def _tree_item(e: Entry) -> dict[str, Any]:
    if e.kind == "blob":
        return {"type": "file", "oid": e.oid, "size": e.size, "path": e.path}
    return {"type": "directory", "oid": e.oid, "size": 0, "path": e.path}


def _checked_path(path: str) -> str:
    try:
        return check_repo_path(path)
    except HubError:
        raise not_found(f"invalid path {path!r}", "EntryNotFound") from None


async def resolve_file(request: Request, api: Api, rest: list[str]) -> Response:
    repo_id = request.state.repo_id
    if len(rest) < 2:
        raise not_found("no file in the resolve URL", "EntryNotFound")
    await api.readable(request, repo_id)
    path = _checked_path("/".join(rest[1:]))
    sha, entry, blob = await run_in_threadpool(_locate, api, repo_id, rest[0], path)
    headers = {"ETag": f'"{entry.oid}"', "X-Repo-Commit": sha, "Cache-Control": "no-cache"}
    return FileResponse(blob, headers=headers, media_type="application/octet-stream",
                        content_disposition_type="inline")


def _locate(api: Api, repo_id: str, revision: str, path: str) -> tuple[str, Entry, Path]:
    """Revision -> commit -> tree entry -> blob file on disk (one thread hop for all)."""
    try:
        sha = api.store.resolve(repo_id, revision)
    except HubError:  # RevisionNotFoundError included
        raise not_found(f"Revision {revision} not found in {repo_id}",
                        "RevisionNotFound") from None
    entry = api.store.entry(repo_id, sha, path)
    if entry is None or entry.kind != "blob":
        raise not_found(f"{path} does not exist at {sha}", "EntryNotFound")
    return sha, entry, api.store.blob_file(repo_id, sha, entry)


async def validate_yaml(request: Request, api: Api, rest: list[str]) -> Response:
    """README.md metadata check before a commit: model cards are not validated here."""
    await _json_body(request)
    return JSONResponse({"errors": [], "warnings": []})


async def org_overview(request: Request, api: Api, rest: list[str]) -> Response:
    org = request.state.repo_id
    return JSONResponse({"name": org, "fullname": org,
                         "trustedKernelPublisher": api.config.is_trusted(org)})


# --- writes ---------------------------------------------------------------------------------


async def create_repo(request: Request, api: Api, rest: list[str]) -> Response:
    api.can_write(request)
    body = await _json_body(request)
    if body.get("type", "kernel") != "kernel":
        raise ServeApiError(400, "this hub serves kernel repositories only (repo_type='kernel')")
    repo_id = f"{body.get('organization')}/{body.get('name')}"
    try:
        check_repo_id(repo_id)
    except HubError as exc:
        raise ServeApiError(400, exc.message) from None
    private = body.get("visibility") == "private" or body.get("private") is True
    created = await run_in_threadpool(api.store.create, repo_id, private=private)
    if not created:
        raise ServeApiError(409, f"You already created this kernel repo: {repo_id}",
                       url=f"{_base(request)}/kernels/{repo_id}")
    log.info("created repository %s%s", repo_id, " (private)" if private else "")
    return JSONResponse({"url": f"{_base(request)}/kernels/{repo_id}", "name": repo_id})


async def create_branch(request: Request, api: Api, rest: list[str]) -> Response:
    repo_id = request.state.repo_id
    api.can_write(request)
    await api.readable(request, repo_id)
    body = await _json_body(request)
    start = body.get("startingPoint")
    if start is not None:
        await api.resolve(repo_id, str(start))
    await _ref_call(api.store.create_branch, repo_id, "/".join(rest), start)
    return JSONResponse({})


async def create_tag(request: Request, api: Api, rest: list[str]) -> Response:
    repo_id = request.state.repo_id
    api.can_write(request)
    await api.readable(request, repo_id)
    body = await _json_body(request)
    revision = "/".join(rest)
    await api.resolve(repo_id, revision)
    await _ref_call(api.store.create_tag, repo_id, str(body.get("tag")), revision)
    return JSONResponse({})


async def _ref_call(fn: Callable[..., None], *args: Any) -> None:
    try:
        await run_in_threadpool(fn, *args)
    except RefConflict as exc:
        raise ServeApiError(409, exc.message) from None
    except HubError as exc:
        raise ServeApiError(400, exc.message) from None


async def preupload(request: Request, api: Api, rest: list[str]) -> Response:
    repo_id = request.state.repo_id
    api.can_write(request)
    await api.readable(request, repo_id)
    body = await _json_body(request)
    files = body.get("files")
    if not isinstance(files, list):
        raise ServeApiError(400, "preupload needs a 'files' list")
    sha = await api.resolve(repo_id, "/".join(rest), fresh=True)
    entries = {e.path: e.oid for e in await run_in_threadpool(api.store.tree, repo_id, sha)}
    return JSONResponse({"files": [
        {"path": f.get("path"), "uploadMode": "regular", "shouldIgnore": False,
         "oid": entries.get(str(f.get("path")))} for f in files if isinstance(f, dict)]})


async def commit(request: Request, api: Api, rest: list[str]) -> Response:
    repo_id = request.state.repo_id
    api.can_write(request)
    await api.readable(request, repo_id)
    revision = "/".join(rest)
    create_pr = request.query_params.get("create_pr") in ("1", "true", "True")
    base = await api.resolve(repo_id, revision, fresh=True)
    ref = parse_pr_ref(revision) or (f"refs/heads/{revision}" if is_ref_name(revision) else None)
    if ref is None:
        raise ServeApiError(400, f"cannot commit to {revision}: not a branch or pull-request ref")
    api.scratch.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="commit-", dir=api.scratch))
    try:
        body = tmp / "body.ndjson"
        await _spool(request, body, api.config.max_commit_bytes)
        oid, pr = await run_in_threadpool(_apply_commit, api, repo_id, ref, base, body, tmp,
                                          create_pr)
    finally:
        await run_in_threadpool(shutil.rmtree, tmp, True)
    log.info("commit %s to %s %s", oid[:12], repo_id, pr or ref)
    url = f"{_base(request)}/kernels/{repo_id}"
    pr_url = f"{url}/discussions/{pr.rsplit('/', 1)[1]}" if pr else None
    return JSONResponse({"commitOid": oid, "commitUrl": f"{url}/commit/{oid}",
                         "pullRequestUrl": pr_url})


async def _spool(request: Request, out: Path, limit: int) -> None:
    """Stream the request body to ``out`` (never all in memory)."""
    size = 0
    with open(out, "wb") as fh:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise ServeApiError(413, f"the commit body is larger than {limit} bytes")
            fh.write(chunk)


def _apply_commit(api: Api, repo_id: str, ref: str, base: str, body: Path, tmp: Path,
                  create_pr: bool) -> tuple[str, str | None]:
    with open(body, "rb") as fh:
        try:
            req = read_commit(fh, tmp)
        except CommitBodyError as exc:
            raise ServeApiError(400, str(exc)) from None
    if req.lfs:
        raise ServeApiError(400, f"{req.lfs[0]}: LFS uploads are not supported by this hub; "
                       "it answers preupload with uploadMode=regular")
    for p in [*req.files, *req.deleted_files, *req.deleted_dirs]:
        try:
            check_repo_path(p)
        except HubError as exc:
            raise ServeApiError(400, exc.message) from None
    parent = req.header.get("parentCommit")
    if parent and parent != base:
        raise ServeApiError(412, f"parent commit {parent} is not the head of {ref} ({base}); "
                       "someone else committed first")
    pr = None
    if create_pr:
        pr = _open_pr(api.store, repo_id, base)
        ref = pr
    message = str(req.header.get("summary") or "")
    if req.header.get("description"):
        message += f"\n\n{req.header['description']}"
    try:
        oid = api.store.commit(repo_id, ref, base, req.files, req.deleted_files,
                               req.deleted_dirs, message or "Upload")
    except RefConflict as exc:
        raise ServeApiError(412, exc.message) from None
    except HubError as exc:
        raise ServeApiError(400, exc.message) from None
    return oid, pr


def _open_pr(store: Store, repo_id: str, base: str) -> str:
    for _ in range(20):  # another PR may take the number first: take the next one
        ref = store.next_pr(repo_id)
        with contextlib.suppress(RefConflict):
            store.create_ref(repo_id, ref, base, ref)
            return ref
    raise ServeApiError(409, "could not allocate a pull-request number")


async def _json_body(request: Request) -> dict[str, Any]:
    raw = await request.body()
    if not raw:
        return {}
    try:
        data = json.loads(raw)
    except ValueError:
        raise ServeApiError(400, "the request body is not JSON") from None
    if not isinstance(data, dict):
        raise ServeApiError(400, "the request body must be a JSON object")
    return data


def _base(request: Request) -> str:
    return str(request.base_url).rstrip("/")


# --- routing --------------------------------------------------------------------------------

_REPO_ROUTES: dict[tuple[str, str, str], Handler] = {
    ("api", "GET", ""): repo_info, ("api", "GET", "revision"): repo_info,
    ("api", "GET", "refs"): refs, ("api", "GET", "tree"): tree,
    ("api", "POST", "preupload"): preupload, ("api", "POST", "commit"): commit,
    ("api", "POST", "branch"): create_branch, ("api", "POST", "tag"): create_tag,
    ("file", "GET", "resolve"): resolve_file, ("file", "HEAD", "resolve"): resolve_file,
}


def _route(method: str, parts: list[str]) -> tuple[Handler, str, list[str]]:
    """Raw path segments (unquoted one by one) -> handler, repo id, the remaining segments."""
    if parts[:2] == ["api", "kernels"] and len(parts) >= 4:
        kind, repo_id, rest = "api", f"{parts[2]}/{parts[3]}", parts[4:]
        endpoint = rest[0] if rest else ""
        handler = _REPO_ROUTES.get((kind, method, endpoint))
        if handler is not None:
            return handler, repo_id, rest if endpoint in ("", "revision") else rest[1:]
    if parts[:1] == ["kernels"] and len(parts) >= 4:
        handler = _REPO_ROUTES.get(("file", method, parts[3]))
        if handler is not None:
            return handler, f"{parts[1]}/{parts[2]}", parts[4:]
    if method == "POST" and parts == ["api", "repos", "create"]:
        return create_repo, "", []
    if method == "POST" and parts == ["api", "validate-yaml"]:
        return validate_yaml, "", []
    if method == "GET" and len(parts) == 4 and parts[:2] == ["api", "organizations"] \
            and parts[3] == "overview":
        return org_overview, parts[2], []
    raise not_found(f"no endpoint for {method} /{'/'.join(parts)}", "NotFound")


def create_app(config: ServeConfig) -> Starlette:
    """The ASGI application serving ``config.hub_dir``."""
    api = Api(config)

    async def dispatch(request: Request) -> Response:
        raw = request.scope.get("raw_path") or request.url.path.encode()
        path = raw.decode("latin-1").split("?", 1)[0]
        parts = [unquote(p) for p in path.strip("/").split("/")]
        try:
            handler, repo_id, rest = _route(request.method, parts)
            request.state.repo_id = repo_id
            return await handler(request, api, rest)
        except ServeApiError as exc:
            return error_response(exc)
        except ClientDisconnect:
            log.warning("%s %s: the client went away; nothing was written",
                        request.method, request.url.path)
            return Response(status_code=400)

    methods = ["GET", "HEAD", "POST"]
    app = Starlette(routes=[Route("/{path:path}", dispatch, methods=methods)])
    app.state.api = api
    return app
