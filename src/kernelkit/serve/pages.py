"""The hub's web pages: read-only HTML beside the Hub API, on paths the API never uses.

=============================================  ============================================
``GET /[?q=words]``                            the kernels, searched (names, descriptions,
                                               variants, release tags)
``GET /kernels/{org}/{name}``                  a kernel at its highest version branch
``GET /kernels/{org}/{name}/tree/{rev}``       a kernel at a revision (the URL ``kernelkit
                                               upload`` prints)
``GET /kernels/{org}/{name}/raw/{rev}/{path}``  a file of the repository for the pages (charts,
                                               results): typed, sandboxed by its CSP
``GET /-/style.css``, ``/-/icon.svg``          the stylesheet and the icon
``GET|POST /-/login``, ``POST /-/logout``      a token into (out of) an HttpOnly cookie
=============================================  ============================================

The API's paths (``/api/...``, ``/kernels/{org}/{name}/resolve/...``) are disjoint from these:
:meth:`Site.route` answers ``None`` for them, and the API routes them as before. Access rules
are the API's: anonymous readers see public repositories unless ``--require-read-token``; a
private repository is "not found" without a token. A browser cannot add an
``Authorization`` header to a link, so the pages also accept the token from a cookie set by the
login form; the cookie is honoured by the pages only, never by the API (so it can never
authorise a write, and a cross-site form cannot use it).

Every page carries a Content-Security-Policy without scripts (``default-src 'none'``); files
under ``raw/`` carry ``sandbox`` as well, so an SVG from a repository that is opened directly
runs no script and gets no access to the hub's origin.
"""

from __future__ import annotations

import base64
import binascii
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path, PurePosixPath
from urllib.parse import parse_qs

from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request
from starlette.responses import FileResponse, HTMLResponse, RedirectResponse, Response

from kernelkit.errors import HubError, KernelkitError, ServeApiError
from kernelkit.hub.names import check_repo_id
from kernelkit.serve import fields, render
from kernelkit.serve.body import body_chunks
from kernelkit.serve.catalog import Catalog, KernelView, Summary
from kernelkit.serve.config import Access, ServeConfig
from kernelkit.serve.fit import check_fit, fit_options
from kernelkit.serve.store import Entry, Store
from kernelkit.util.publishers import DEFAULT_TRUSTED_PUBLISHERS

log = logging.getLogger("kernelkit.serve")

COOKIE = "kernelkit_token"
PAGE_CSP = ("default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
            "base-uri 'none'; frame-ancestors 'none'")
RAW_CSP = "default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; sandbox"
SECURITY_HEADERS = {"X-Content-Type-Options": "nosniff", "Referrer-Policy": "same-origin",
                    "X-Frame-Options": "DENY"}
MAX_QUERY = 200  # characters of a search
MAX_FORM_BYTES = 4096  # the login form's body
MAX_TOKEN = 512
INDEX_LIMIT = 200  # kernels listed on one index page
_TEXT = "text/plain; charset=utf-8"
#: file types the raw route names; anything else is a download (application/octet-stream)
RAW_TYPES = {
    ".png": "image/png", ".svg": "image/svg+xml", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
    ".gif": "image/gif", ".webp": "image/webp", ".json": "application/json",
    **dict.fromkeys((".md", ".txt", ".py", ".toml", ".cfg", ".yaml", ".yml", ".lock", ".cu",
                     ".cuh", ".c", ".cc", ".cpp", ".h", ".hpp", ".cmake", ".metal", ".mm",
                     ".csv", ".sh"), _TEXT),
}
STYLE = (Path(__file__).parent / "web.css").read_text(encoding="utf-8")
ICON = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" '
        'height="16" rx="3" fill="#0b57d0"/><path d="M4 4v8M4 8l5-4M4 8l5 4M11 4v8" '
        'stroke="#fff" stroke-width="1.6" fill="none"/></svg>')

Resolver = Callable[[str, str], Awaitable[str]]
Page = Callable[[Request], Awaitable[Response]]


class Site:
    """The pages over one store; ``resolve`` is the API's (revision checked, 404 if none)."""

    def __init__(self, config: ServeConfig, store: Store, resolve: Resolver) -> None:
        self.config = config
        self.store = store
        self.catalog = Catalog(store)
        self.resolve = resolve

    def route(self, method: str, parts: list[str]) -> Page | None:
        """The page for a request, or ``None`` (then the API routes it)."""
        read = method in ("GET", "HEAD")
        if parts == [""] and read:
            return self._guarded(self.index)
        if parts == ["-", "style.css"] and read:
            return self.style
        if parts == ["-", "icon.svg"] and read:
            return self.icon
        if parts == ["-", "login"] and (read or method == "POST"):
            return self._guarded(self.login)
        if parts == ["-", "logout"] and method == "POST":
            return self.logout
        if not read or parts[:1] != ["kernels"] or len(parts) < 3:
            return None
        org, name, rest = parts[1], parts[2], parts[3:]
        if not rest or (rest[0] == "tree" and len(rest) >= 2):
            revision = "/".join(rest[1:]) if rest else None
            return self._guarded(lambda r: self.kernel(r, org, name, revision))
        if rest[0] == "raw" and len(rest) >= 3:
            return self._guarded(lambda r: self.raw(r, org, name, rest[1:]), html=False)
        return None

    # --- access ----------------------------------------------------------------------------

    def access(self, request: Request) -> Access:
        """The API's header first; else the login cookie (base64 of the token)."""
        header = request.headers.get("authorization")
        if header:
            return self.config.access(header)
        cookie = request.cookies.get(COOKIE)
        if not cookie:
            return Access.ANONYMOUS
        try:
            token = base64.urlsafe_b64decode(cookie.encode("ascii")).decode("utf-8")
        except (ValueError, binascii.Error, UnicodeError):
            return Access.INVALID
        return self.config.access(f"Bearer {token}")

    def visitor(self, request: Request) -> render.Visitor:
        path = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        return render.Visitor(self.access(request) in (Access.READ, Access.WRITE), path)

    def may_read(self, request: Request) -> Access:
        access = self.access(request)
        if access is Access.INVALID:
            raise ServeApiError(401, "This browser's token is not accepted by this hub (it may "
                                "have been revoked). Sign in again.")
        if access is Access.ANONYMOUS and self.config.read_requires_token:
            raise ServeApiError(401, "This hub needs a token to read. Sign in with a read or "
                                "write token.")
        return access

    async def readable(self, request: Request, repo_id: str) -> Access:
        """As the API's check: unknown and private-without-token are the same "not found"."""
        access = self.may_read(request)
        missing = ServeApiError(404, f"There is no kernel {repo_id[:200]} on this hub (or it "
                                "is private and you are not signed in).")
        try:
            check_repo_id(repo_id)
        except HubError:
            raise missing from None
        exists, private = await run_in_threadpool(
            lambda: (self.store.exists(repo_id), self.store.is_private(repo_id)))
        if not exists or (private and access is Access.ANONYMOUS):
            raise missing
        return access

    def _guarded(self, page: Page, *, html: bool = True) -> Page:
        """``page`` with its errors as HTML pages (``raw``: plain text), and the headers."""
        async def run(request: Request) -> Response:
            try:
                response = await page(request)
            except ServeApiError as exc:
                response = self.error(request, exc, html=html)
            except ClientDisconnect:
                return Response(status_code=400)
            for key, value in SECURITY_HEADERS.items():
                response.headers.setdefault(key, value)
            response.headers.setdefault("Content-Security-Policy", PAGE_CSP)
            response.headers.setdefault("Cache-Control", "no-store")
            return response
        return run

    def error(self, request: Request, exc: ServeApiError, *, html: bool) -> Response:
        titles = {401: "Sign in needed", 403: "Not allowed", 404: "Not found"}
        title = titles.get(exc.status, "Bad request" if exc.status < 500 else "Error")
        if not html:
            return Response(f"{title}: {exc.message}\n", exc.status, media_type=_TEXT)
        visitor = self.visitor(request)
        if exc.status == 401 and self.access(request) is Access.INVALID:
            visitor = render.Visitor(False, visitor.path)
            response = HTMLResponse(render.error_page(401, title, exc.message, visitor), 401)
            response.delete_cookie(COOKIE, path="/")
            return response
        return HTMLResponse(render.error_page(exc.status, title, exc.message, visitor),
                            exc.status)

    # --- pages -----------------------------------------------------------------------------

    async def style(self, request: Request) -> Response:
        return Response(STYLE, media_type="text/css; charset=utf-8",
                        headers={**SECURITY_HEADERS, "Cache-Control": "public, max-age=300"})

    async def icon(self, request: Request) -> Response:
        return Response(ICON, media_type="image/svg+xml",
                        headers={**SECURITY_HEADERS, "Content-Security-Policy": RAW_CSP,
                                 "Cache-Control": "public, max-age=300"})

    async def index(self, request: Request) -> Response:
        access = self.may_read(request)
        q = fields.text(request.query_params.get("q"), "search", max_len=MAX_QUERY).strip()
        words = q.split()
        found, total = await run_in_threadpool(self._search, words,
                                               access is not Access.ANONYMOUS)
        return HTMLResponse(render.index_page(found, total, q, INDEX_LIMIT,
                                              self.visitor(request)))

    def _search(self, words: list[str], signed_in: bool) -> tuple[list[tuple[Summary, bool]],
                                                                   int]:
        visible = []
        for repo_id in self.catalog.repo_ids():
            private = self.store.is_private(repo_id)
            if private and not signed_in:
                continue
            try:
                summary = self.catalog.summary(repo_id)
            except KernelkitError as exc:  # a broken repository does not hide the others
                log.warning("index: cannot read %s (%s)", repo_id, exc)
                summary = Summary(repo_id, None, None, "", "(unreadable)", (), ())
            visible.append((summary, private))
        return [(s, p) for s, p in visible if s.matches(words)], len(visible)

    async def kernel(self, request: Request, org: str, name: str,
                     revision: str | None) -> Response:
        repo_id = f"{org}/{name}"
        access = await self.readable(request, repo_id)
        if revision is None:
            revision = await run_in_threadpool(self.catalog.default_revision, repo_id)
        commit = await self.resolve(repo_id, revision)
        view: KernelView = await run_in_threadpool(
            self.catalog.kernel, repo_id, revision, commit, render.raw_url(repo_id, commit))
        names = [v.name for v in view.variants]
        options = fit_options(names)
        fit = check_fit(names, options, request.query_params)
        usage = render.Usage(
            base_url=str(request.base_url).rstrip("/"),
            kernelkit_trusted=org in DEFAULT_TRUSTED_PUBLISHERS,
            server_trusted=self.config.is_trusted(org),
            token_needed=view.private or self.config.read_requires_token)
        visitor = render.Visitor(access is not Access.ANONYMOUS, self.visitor(request).path)
        return HTMLResponse(render.kernel_page(view, usage, options, fit, visitor))

    async def raw(self, request: Request, org: str, name: str, rest: list[str]) -> Response:
        """A file at a revision, with its type from :data:`RAW_TYPES` and the sandbox CSP."""
        repo_id = f"{org}/{name}"
        revision, sub = fields.split_revision(rest)
        path = fields.repo_path("/".join(sub))
        await self.readable(request, repo_id)
        commit = await self.resolve(repo_id, revision)
        entry, blob = await run_in_threadpool(self._blob, repo_id, commit, path)
        media = RAW_TYPES.get(PurePosixPath(path).suffix.lower(), "application/octet-stream")
        headers = {**SECURITY_HEADERS, "Content-Security-Policy": RAW_CSP,
                   "ETag": f'"{entry.oid}"', "X-Repo-Commit": commit,
                   "Cache-Control": "private, no-cache"}
        attachment = media == "application/octet-stream"
        return FileResponse(blob, headers=headers, media_type=media,
                            filename=PurePosixPath(path).name if attachment else None,
                            content_disposition_type="attachment" if attachment else "inline")

    def _blob(self, repo_id: str, commit: str, path: str) -> tuple[Entry, Path]:
        entry = self.store.entry(repo_id, commit, path)
        if entry is None or entry.kind != "blob":
            raise ServeApiError(404, f"{path[:300]} does not exist at {commit[:12]}")
        return entry, self.store.blob_file(repo_id, commit, entry)

    # --- signing in and out ----------------------------------------------------------------

    async def login(self, request: Request) -> Response:
        visitor = self.visitor(request)
        if request.method != "POST":
            next_path = safe_next(request.query_params.get("next"))
            return HTMLResponse(render.login_page(next_path, "", visitor))
        same_origin(request)
        form = await read_form(request, self.config)
        next_path = safe_next(form.get("next"))
        token = fields.text(form.get("token"), "token", max_len=MAX_TOKEN).strip()
        access = self.config.access(f"Bearer {token}") if token else Access.INVALID
        if access not in (Access.READ, Access.WRITE):
            log.info("pages: a sign-in with an unknown token was refused")
            return HTMLResponse(render.login_page(
                next_path, "That is not a token of this hub.", visitor), 401)
        response = RedirectResponse(next_path, status_code=303)
        value = base64.urlsafe_b64encode(token.encode("utf-8")).decode("ascii")
        response.set_cookie(COOKIE, value, path="/", httponly=True, samesite="lax",
                            secure=request.url.scheme == "https")
        return response

    async def logout(self, request: Request) -> Response:
        try:
            same_origin(request)
        except ServeApiError as exc:
            return self.error(request, exc, html=True)
        response = RedirectResponse("/", status_code=303)
        response.delete_cookie(COOKIE, path="/")
        for key, value in SECURITY_HEADERS.items():
            response.headers[key] = value
        return response


def safe_next(value: str | None) -> str:
    """Where to go after signing in: a path on this site only (``/...``, never ``//host`` or
    ``/\\host``, which browsers read as another site), else ``/``."""
    if (not value or not value.startswith("/") or value.startswith(("//", "/\\"))
            or len(value) > 2000 or not value.isprintable() or "\\" in value):
        return "/"
    return value


def same_origin(request: Request) -> None:
    """A form POST from another site is refused: its ``Origin`` (sent by every current
    browser on a POST) must be this server's own."""
    origin = request.headers.get("origin")
    own = f"{request.url.scheme}://{request.headers.get('host', '')}"
    if origin is not None and origin != own:
        raise ServeApiError(403, "This form was sent from another site.")


async def read_form(request: Request, config: ServeConfig) -> dict[str, str]:
    """A small ``application/x-www-form-urlencoded`` body: at most :data:`MAX_FORM_BYTES`,
    each field once."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/x-www-form-urlencoded":
        raise ServeApiError(415, "The sign-in form is sent as "
                            "application/x-www-form-urlencoded.")
    raw = bytearray()
    async for chunk in body_chunks(request, config.limits):
        raw += chunk
        if len(raw) > MAX_FORM_BYTES:
            raise ServeApiError(413, f"The form is larger than {MAX_FORM_BYTES} bytes.")
    try:
        parsed = parse_qs(raw.decode("utf-8"), max_num_fields=8, errors="strict")
    except (UnicodeDecodeError, ValueError):
        raise ServeApiError(400, "The form is not valid UTF-8 form data.") from None
    return {k: v[0] for k, v in parsed.items() if len(v) == 1}
