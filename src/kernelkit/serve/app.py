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
``GET  /api/kernels/{repo}/commits/{rev}``             commit history, newest first, paged
``GET  /api/organizations/{org}/overview``             ``trustedKernelPublisher`` (upstream trust)
``POST /api/validate-yaml``                            README metadata: accepted, not validated
=====================================================  =========================================

Beside them, read-only web pages (``/``, ``/kernels/{repo}``, ``/kernels/{repo}/tree/{rev}``,
``/kernels/{repo}/raw/...``, ``/-/...``: :mod:`kernelkit.serve.pages`), on paths no Hub API
client requests; ``ServeConfig.pages=False`` (``--no-pages``) leaves only the API.

``{rev}`` is a branch or tag name, ``refs/heads/<b>``, ``refs/tags/<t>``, ``refs/pr/<n>`` or a
(short) commit id, each as one URL-quoted segment. Every request field is checked by its kind's
validator in :mod:`kernelkit.serve.fields` before it is used.

Errors carry ``X-Error-Code`` (``RepoNotFound``, ``RevisionNotFound``, ``EntryNotFound``) and
``X-Error-Message``, which ``huggingface_hub`` turns into its typed exceptions.
"""

from __future__ import annotations

import contextlib
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
    TreeClashError,
)
from kernelkit.hub.names import check_repo_id
from kernelkit.serve import fields
from kernelkit.serve.body import json_body, spool
from kernelkit.serve.config import Access, ServeConfig
from kernelkit.serve.fields import split_revision
from kernelkit.serve.ndjson import read_commit
from kernelkit.serve.pages import Site
from kernelkit.serve.store import Entry, Store

log = logging.getLogger("kernelkit.serve")

Handler = Callable[[Request, "Api", list[str]], Awaitable[Response]]
MAX_COMMITS_PAGE = 1000


def error_response(exc: ServeApiError) -> Response:
    """The Hub API's error shape: JSON ``{"error": ...}`` plus ``X-Error-Message``/``-Code``
    (header values made safe by ``fields.header_value``); a 408 also closes the connection."""
    headers = {"X-Error-Message": fields.header_value(exc.message)}
    if exc.code:
        headers["X-Error-Code"] = exc.code
    if exc.status == 408:
        headers["Connection"] = "close"
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
        missing = not_found(f"Repository {fields.shown(repo_id)} not found", "RepoNotFound")
        try:
            check_repo_id(repo_id)
        except HubError:
            raise missing from None
        exists, private = await run_in_threadpool(self._exists_private, repo_id)
        if not exists or (private and access is Access.ANONYMOUS):
            raise missing

    def _exists_private(self, repo_id: str) -> tuple[bool, bool]:
        return self.store.exists(repo_id), self.store.is_private(repo_id)

    async def resolve(self, repo_id: str, revision: str, *, fresh: bool = False) -> str:
        """A revision from the request (checked here by ``fields.revision``) -> commit id."""
        fields.revision(revision, repo_id)
        try:
            return await run_in_threadpool(lambda: self.store.resolve(repo_id, revision,
                                                                      fresh=fresh))
        except (RevisionNotFoundError, HubError):
            raise not_found(f"Revision {fields.shown(revision)} not found in {repo_id}",
                            "RevisionNotFound") from None

    async def json(self, request: Request) -> dict[str, Any]:
        return await json_body(request, self.config.limits)


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
    include_prs = fields.flag(request.query_params.get("include_prs"), "include_prs")
    await api.readable(request, repo_id)
    info = await run_in_threadpool(api.store.refs, repo_id)
    body: dict[str, Any] = {
        "branches": [{"name": n, "ref": f"refs/heads/{n}", "targetCommit": c}
                     for n, c in sorted(info.branches.items())],
        "tags": [{"name": n, "ref": f"refs/tags/{n}", "targetCommit": c}
                 for n, c in sorted(info.tags.items())],
        "converts": [],
    }
    if include_prs:
        body["pullRequests"] = [{"name": r.rsplit("/", 1)[1], "ref": r, "targetCommit": c}
                                for r, c in sorted(info.pulls.items())]
    return JSONResponse(body)


def _listing(entries: list[Entry], path: str, recursive: bool) -> list[Entry]:
    prefix = f"{path}/" if path else ""
    if path and not any(e.path == path and e.kind == "tree" for e in entries):
        return []
    under = [e for e in entries if e.path.startswith(prefix)]
    return under if recursive else [e for e in under if "/" not in e.path[len(prefix):]]


def _next_link(request: Request, cursor: int) -> dict[str, str]:
    query = dict(request.query_params)
    query["cursor"] = str(cursor)
    return {"Link": f'<{request.url.replace(query=urlencode(query))}>; rel="next"'}


async def tree(request: Request, api: Api, rest: list[str]) -> Response:
    repo_id = request.state.repo_id
    if not rest:
        raise not_found("no revision in the tree URL", "RevisionNotFound")
    revision, sub = split_revision(rest)
    path = "/".join(sub).strip("/")
    if path:
        fields.repo_path(path)
    recursive = fields.flag(request.query_params.get("recursive"), "recursive")
    fields.flag(request.query_params.get("expand"), "expand")  # answered without expansion
    start = fields.integer(request.query_params.get("cursor"), "cursor", default=0,
                           maximum=10**12)
    await api.readable(request, repo_id)
    sha = await api.resolve(repo_id, revision)
    entries = await run_in_threadpool(api.store.tree, repo_id, sha)
    listing = _listing(entries, path, recursive)
    if path and not listing:
        raise not_found(f"{path} is not a directory at {sha}", "EntryNotFound")
    page = listing[start:start + api.config.page_size]
    more = start + len(page) < len(listing)
    headers = _next_link(request, start + len(page)) if more else {}
    return JSONResponse([_tree_item(e) for e in page], headers=headers)


def _tree_item(e: Entry) -> dict[str, Any]:
    if e.kind == "blob":
        return {"type": "file", "oid": e.oid, "size": e.size, "path": e.path}
    return {"type": "directory", "oid": e.oid, "size": 0, "path": e.path}


async def commits(request: Request, api: Api, rest: list[str]) -> Response:
    """``list_repo_commits``: newest first, paged like tree listings (``cursor``)."""
    repo_id = request.state.repo_id
    if not rest:
        raise not_found("no revision in the commits URL", "RevisionNotFound")
    revision, sub = split_revision(rest)
    if sub:
        raise not_found("commits of a path are not listed here", "NotFound")
    start = fields.integer(request.query_params.get("cursor"), "cursor", default=0,
                           maximum=10**9)
    await api.readable(request, repo_id)
    sha = await api.resolve(repo_id, revision)
    size = min(api.config.page_size, MAX_COMMITS_PAGE)
    page = await run_in_threadpool(api.store.commits, repo_id, sha, start, size + 1)
    headers = _next_link(request, start + size) if len(page) > size else {}
    return JSONResponse([{"id": c.oid, "authors": [{"user": c.author}], "date": c.date,
                          "title": c.title, "message": c.message} for c in page[:size]],
                        headers=headers)


async def resolve_file(request: Request, api: Api, rest: list[str]) -> Response:
    repo_id = request.state.repo_id
    if len(rest) < 2:
        raise not_found("no file in the resolve URL", "EntryNotFound")
    revision, sub = split_revision(rest)
    path = fields.repo_path("/".join(sub))
    fields.revision(revision, repo_id)
    await api.readable(request, repo_id)
    sha, entry, blob = await run_in_threadpool(_locate, api, repo_id, revision, path)
    headers = {"ETag": f'"{entry.oid}"', "X-Repo-Commit": sha, "Cache-Control": "no-cache"}
    return FileResponse(blob, headers=headers, media_type="application/octet-stream",
                        content_disposition_type="inline")


def _locate(api: Api, repo_id: str, revision: str, path: str) -> tuple[str, Entry, Path]:
    """Revision -> commit -> tree entry -> blob file on disk (one thread hop for all)."""
    try:
        sha = api.store.resolve(repo_id, revision)
    except HubError:  # RevisionNotFoundError included
        raise not_found(f"Revision {fields.shown(revision)} not found in {repo_id}",
                        "RevisionNotFound") from None
    entry = api.store.entry(repo_id, sha, path)
    if entry is None or entry.kind != "blob":
        raise not_found(f"{fields.shown(path)} does not exist at {sha}", "EntryNotFound")
    return sha, entry, api.store.blob_file(repo_id, sha, entry)


async def validate_yaml(request: Request, api: Api, rest: list[str]) -> Response:
    """README.md metadata check before a commit: model cards are not validated here."""
    await api.json(request)
    return JSONResponse({"errors": [], "warnings": []})


async def org_overview(request: Request, api: Api, rest: list[str]) -> Response:
    org = request.state.repo_id
    return JSONResponse({"name": org, "fullname": org,
                         "trustedKernelPublisher": api.config.is_trusted(org)})


# --- writes ---------------------------------------------------------------------------------


async def create_repo(request: Request, api: Api, rest: list[str]) -> Response:
    api.can_write(request)
    body = await api.json(request)
    if fields.string(body, "type", required=False) not in (None, "kernel"):
        raise ServeApiError(400, "this hub serves kernel repositories only (repo_type='kernel')")
    repo_id = f"{fields.string(body, 'organization')}/{fields.string(body, 'name')}"
    try:
        check_repo_id(repo_id)
    except HubError as exc:
        raise ServeApiError(400, exc.message) from None
    visibility = fields.string(body, "visibility", required=False)
    private = visibility == "private" or body.get("private") is True
    created = await run_in_threadpool(api.store.create, repo_id, private=private)
    if not created:
        raise ServeApiError(409, f"You already created this kernel repo: {repo_id}",
                            url=f"{_base(request)}/kernels/{repo_id}")
    log.info("created repository %s%s", repo_id, " (private)" if private else "")
    return JSONResponse({"url": f"{_base(request)}/kernels/{repo_id}", "name": repo_id})


async def create_branch(request: Request, api: Api, rest: list[str]) -> Response:
    repo_id = request.state.repo_id
    api.can_write(request)
    branch = fields.new_ref_name("/".join(rest), "branch")
    await api.readable(request, repo_id)
    body = await api.json(request)
    start = fields.string(body, "startingPoint", required=False)
    if start is not None:
        await api.resolve(repo_id, start)
    await _ref_call(api.store.create_branch, repo_id, branch, start)
    return JSONResponse({})


async def create_tag(request: Request, api: Api, rest: list[str]) -> Response:
    repo_id = request.state.repo_id
    api.can_write(request)
    await api.readable(request, repo_id)
    body = await api.json(request)
    tag = fields.new_ref_name(body.get("tag"), "tag")
    fields.text(body.get("message"), "tag message")  # accepted; tags here are lightweight
    revision = "/".join(rest)
    await api.resolve(repo_id, revision)
    await _ref_call(api.store.create_tag, repo_id, tag, revision)
    return JSONResponse({})


async def delete_ref(request: Request, api: Api, rest: list[str]) -> Response:
    """``DELETE .../branch/<name>`` and ``.../tag/<name>`` (huggingface_hub's
    ``delete_branch``/``delete_tag``; ``kernelkit hub rm-version``/``retag``); never ``main``."""
    repo_id = request.state.repo_id
    api.can_write(request)
    await api.readable(request, repo_id)
    kind = request.state.endpoint
    name = fields.new_ref_name("/".join(rest), kind)
    if kind == "branch" and name == "main":
        raise ServeApiError(403, "main cannot be deleted: it holds the repository's card")
    ref = f"refs/{'heads' if kind == 'branch' else 'tags'}/{name}"
    try:
        await api.resolve(repo_id, ref, fresh=True)
    except ServeApiError:
        raise not_found(f"{kind} {name} not found in {repo_id}", "RevisionNotFound") from None
    await _ref_call(api.store.delete_ref, repo_id, ref, f"{kind} {name}")
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
    body = await api.json(request)
    files = body.get("files")
    if not isinstance(files, list) or not all(isinstance(f, dict) for f in files):
        raise ServeApiError(400, "preupload needs a 'files' list of objects")
    paths = [fields.repo_path(str(fields.string(f, "path", max_len=fields.MAX_PATH)),
                              status=400) for f in files]
    sha = await api.resolve(repo_id, "/".join(rest), fresh=True)
    entries = {e.path: e.oid for e in await run_in_threadpool(api.store.tree, repo_id, sha)}
    return JSONResponse({"files": [
        {"path": p, "uploadMode": "regular", "shouldIgnore": False, "oid": entries.get(p)}
        for p in paths]})


async def commit(request: Request, api: Api, rest: list[str]) -> Response:
    repo_id = request.state.repo_id
    api.can_write(request)
    revision = "/".join(rest)
    create_pr = fields.flag(request.query_params.get("create_pr"), "create_pr")
    await api.readable(request, repo_id)
    base = await api.resolve(repo_id, revision, fresh=True)
    ref = fields.commit_ref(revision)
    api.scratch.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="commit-", dir=api.scratch))
    try:
        body = tmp / "body.ndjson"
        await spool(request, body, api.config.max_commit_bytes, api.config.limits)
        oid, pr = await run_in_threadpool(_apply_commit, api, repo_id, ref, base, body, tmp,
                                          create_pr)
    finally:
        await run_in_threadpool(shutil.rmtree, tmp, True)
    log.info("commit %s to %s %s", oid[:12], repo_id, pr or ref)
    url = f"{_base(request)}/kernels/{repo_id}"
    pr_url = f"{url}/discussions/{pr.rsplit('/', 1)[1]}" if pr else None
    return JSONResponse({"commitOid": oid, "commitUrl": f"{url}/commit/{oid}",
                         "pullRequestUrl": pr_url})


def _commit_message(header: dict[str, Any]) -> str:
    summary = fields.text(header.get("summary"), "summary")
    description = fields.text(header.get("description"), "description")
    message = f"{summary}\n\n{description}" if description else summary
    return message if message.strip() else "Upload"


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
        fields.repo_path(p, status=400)
    message = _commit_message(req.header)
    parent = fields.string(req.header, "parentCommit", required=False)
    if parent and parent != base:
        raise ServeApiError(412, f"parent commit {fields.shown(parent)} is not the head of "
                            f"{ref} ({base}); someone else committed first")
    pr = None
    if create_pr:
        pr = _open_pr(api.store, repo_id, base)
        ref = pr
    try:
        oid = api.store.commit(repo_id, ref, base, req.files, req.deleted_files,
                               req.deleted_dirs, message)
    except TreeClashError as exc:
        raise ServeApiError(409, exc.message, path=exc.path, hint=exc.hint) from None
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


def _base(request: Request) -> str:
    return str(request.base_url).rstrip("/")


# --- routing --------------------------------------------------------------------------------

_REPO_ROUTES: dict[tuple[str, str, str], Handler] = {
    ("api", "GET", ""): repo_info, ("api", "GET", "revision"): repo_info,
    ("api", "GET", "refs"): refs, ("api", "GET", "tree"): tree,
    ("api", "GET", "commits"): commits,
    ("api", "POST", "preupload"): preupload, ("api", "POST", "commit"): commit,
    ("api", "POST", "branch"): create_branch, ("api", "POST", "tag"): create_tag,
    ("api", "DELETE", "branch"): delete_ref, ("api", "DELETE", "tag"): delete_ref,
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
    raise not_found(f"no endpoint for {method} {fields.shown('/' + '/'.join(parts))}",
                    "NotFound")


def create_app(config: ServeConfig) -> Starlette:
    """The ASGI application serving ``config.hub_dir``."""
    api = Api(config)
    site = Site(config, api.store, api.resolve) if config.pages else None

    async def dispatch(request: Request) -> Response:
        raw = request.scope.get("raw_path") or request.url.path.encode()
        path = raw.decode("latin-1").split("?", 1)[0]
        parts = [unquote(p) for p in path.strip("/").split("/")]
        page = site.route(request.method, parts) if site is not None else None
        if page is not None:  # the web pages (serve/pages.py): never an API path
            return await page(request)
        try:
            handler, repo_id, rest = _route(request.method, parts)
            request.state.repo_id = repo_id
            request.state.endpoint = parts[4] if len(parts) > 4 else ""
            return await handler(request, api, rest)
        except ServeApiError as exc:
            return error_response(exc)
        except ClientDisconnect:
            log.warning("%s %s: the client went away; nothing was written",
                        request.method, fields.shown(request.url.path))
            return Response(status_code=400)

    async def unrouted(request: Request, exc: Exception) -> Response:
        """What the route pattern cannot match (a path with a newline): dispatched all the
        same, so it gets the API's error shape."""
        return await dispatch(request)

    methods = ["GET", "HEAD", "POST", "DELETE"]
    app = Starlette(routes=[Route("/{path:path}", dispatch, methods=methods)],
                    exception_handlers={404: unrouted})
    app.state.api = api
    return app
