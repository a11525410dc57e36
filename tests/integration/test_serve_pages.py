"""``kernelkit serve``'s web pages over HTTP, against a real server (``python -m kernelkit
serve``) on 127.0.0.1 serving the hub of ``tests/webhub.py`` (real uploads, a real benchmark
run, a hostile repository, a private one): what each page shows, escaping, 404s, the access
rules (private repositories, the login cookie, ``--require-read-token``) and that the Hub API
beside the pages is unchanged. The browser test is test_serve_browser.py."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import pytest

pytest.importorskip("uvicorn")
pytest.importorskip("markdown_it")

from kernelkit.hub.local import LocalGitHub
from tests.hubserver import READ_TOKEN, WRITE_TOKEN, HubServer, run_server
from tests.webhub import EVIL_TEXT, DemoHub, assert_inert

EVIL_SHOWN = "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&quot;&#x27;&gt;&lt;img src=x"


@pytest.fixture(scope="module")
def server(web_hub: DemoHub, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubServer]:
    with run_server(web_hub.root, tmp_path_factory.mktemp("pages")) as srv:
        yield srv


class Reply:
    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status, self.headers, self.body = status, headers, body

    @property
    def text(self) -> str:
        return self.body.decode("utf-8")

    def cookie(self) -> str | None:
        """The value of the login cookie this reply sets ("" when it deletes it)."""
        raw = self.headers.get("set-cookie", "")
        if not raw.startswith("kernelkit_token="):
            return None
        return raw.split(";", 1)[0].split("=", 1)[1].strip('"')


def request(server: HubServer, method: str, target: str, *, body: bytes | None = None,
            headers: dict[str, str] | None = None, cookie: str | None = None) -> Reply:
    """One request, redirects not followed."""
    url = urlsplit(server.url)
    conn = http.client.HTTPConnection(url.hostname or "", url.port, timeout=60)
    hdrs = dict(headers or {})
    if cookie is not None:
        hdrs["Cookie"] = f"kernelkit_token={cookie}"
    try:
        conn.request(method, target, body=body, headers=hdrs)
        resp = conn.getresponse()
        return Reply(resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read())
    finally:
        conn.close()


def get(server: HubServer, target: str, **kw: Any) -> Reply:
    return request(server, "GET", target, **kw)


def login(server: HubServer, token: str, next_path: str = "/",
          origin: str | None = None) -> Reply:
    headers = {"Content-Type": "application/x-www-form-urlencoded"}
    if origin is not None:
        headers["Origin"] = origin
    return request(server, "POST", "/-/login", headers=headers,
                   body=urlencode({"token": token, "next": next_path}).encode())


def assert_page(reply: Reply, status: int = 200) -> str:
    assert reply.status == status, (reply.status, reply.body[:500])
    assert reply.headers["content-type"] == "text/html; charset=utf-8"
    csp = reply.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "script-src" not in csp
    assert reply.headers["x-content-type-options"] == "nosniff"
    assert reply.headers["cache-control"] == "no-store"
    assert_inert(reply.text)
    return reply.text


def test_index_lists_the_public_kernels_and_searches_them(server: HubServer) -> None:
    page = assert_page(get(server, "/"))
    for repo in ("acme/scale", "kernels-community/relu", "acme/evil"):
        assert f'href="/kernels/{repo}"' in page
    assert "team/secret" not in page and "3 on this hub." in page
    assert "A synthetic scale kernel" in page  # the card's first paragraph

    def found(q: str) -> set[str]:
        text = assert_page(get(server, "/?" + urlencode({"q": q})))
        return {r for r in ("acme/scale", "kernels-community/relu", "acme/evil", "team/secret")
                if f'href="/kernels/{r}"' in text}

    assert found("cuda") == {"kernels-community/relu"}  # a variant's backend
    assert found("SYNTHETIC scale") == {"acme/scale"}  # description words, any case
    assert found("v2.0.0") == {"acme/scale"}  # a release tag
    assert found("acme") == {"acme/scale", "acme/evil"}
    assert found("secret") == set()  # private: not even searchable anonymously
    assert "Nothing matches" in assert_page(get(server, "/?q=no-such-kernel"))
    bad = get(server, "/?q=%00")
    assert bad.status == 400 and "search" in assert_page(bad, 400)


def _sizes(hub: Path, repo: str, commit: str, variant: str) -> tuple[int, int]:
    files = LocalGitHub(hub).list_files(repo, commit, f"build/{variant}")
    return len(files), sum(f.size for f in files)


def test_kernel_page_shows_card_versions_variants_results_and_usage(
        server: HubServer, web_hub: DemoHub) -> None:
    page = assert_page(get(server, "/kernels/acme/scale"))
    commit = web_hub.scale_v2
    assert f"Showing <strong>v2</strong>: <a href=\"/kernels/acme/scale/tree/{commit}\"" in page
    # the card, rendered
    assert "<h1>scale</h1>" in page and "<th>dtype</th>" in page and "<s>slow</s>" in page
    assert f'href="/kernels/acme/scale/raw/{commit}/benchmarks/benchmark_scale.py"' in page
    # versions and tags: each version's release tags, the one at its head marked
    assert ('<a href="/kernels/acme/scale/tree/v2.0.0" class="mono">v2.0.0</a> (head)'
            in page)
    assert ('<a href="/kernels/acme/scale/tree/v1.1.0" class="mono">v1.1.0</a> (head), '
            '<a href="/kernels/acme/scale/tree/v1.0.0" class="mono">v1.0.0</a>') in page
    assert "Rebuild scale with the new toolchain" in page
    # the variant, its size from the hub's own listing, and what it needs
    files, size = _sizes(web_hub.root, "acme/scale", commit, "torch-cpu")
    assert (f'<td class="mono">torch-cpu</td><td>any CPU machine, any torch (Python code '
            f'only)</td><td class="num">{size / 1024:.1f} KiB</td>'
            f'<td class="num">{files}</td>') in page
    # benchmark results: the table from benchmark.json, the charts in light and dark
    data = json.loads(get(server, f"/kernels/acme/scale/raw/{commit}/benchmarks/results/"
                                  "torch-cpu/benchmark.json").body)
    case = next(c for c in data["cases"] if c["case"] == "scale")
    speedup = case["speedups"]["reference"]
    assert "<th>vs reference</th>" in page
    assert f"{speedup['value']:.2f}\u00d7 [{speedup['ci_low']:.2f}, {speedup['ci_high']:.2f}]" \
        in page
    charts = f"/kernels/acme/scale/raw/{commit}/benchmarks/results/torch-cpu/benchmark-bars"
    assert (f'<source media="(prefers-color-scheme: dark)" srcset="{charts}-dark.svg">'
            f'<img src="{charts}-light.svg"') in page
    # the usage line: acme is not a trusted publisher of kernelkit's, nor of this server
    assert ("kernel = kernelkit.get_kernel(&quot;acme/scale&quot;, version=2, "
            "trust_remote_code=True)") in page
    assert f"export HF_ENDPOINT={server.url} KERNELKIT_HUB=hf</code>" in page
    assert "HF_TOKEN" not in page  # public, and the server reads anonymously


def test_kernel_page_at_a_revision_and_the_loaders_choice(server: HubServer) -> None:
    v1 = assert_page(get(server, "/kernels/acme/scale/tree/v1"))
    assert "Showing <strong>v1</strong>" in v1 and "version=1, trust_remote_code=True" in v1
    tag = assert_page(get(server, "/kernels/acme/scale/tree/v1.0.0"))
    assert "revision=&quot;v1.0.0&quot;" in tag and "First release of scale" in tag
    full = assert_page(get(server, "/kernels/acme/scale/tree/refs%2Fheads%2Fv1"))
    assert "Rebuild scale" in full
    # kernels-community is trusted by kernelkit's loader: no trust_remote_code there
    relu = assert_page(get(server, "/kernels/kernels-community/relu"))
    assert "get_kernel(&quot;kernels-community/relu&quot;, version=1)</code>" in relu
    assert ("Linux x86_64 · torch 2.13 (C++11 ABI) · CUDA 13.0 to 13.x · Python 3.9 or later"
            in relu)
    query = urlencode({"torch": "2.13", "compute": "cu130", "platform": "x86_64-linux",
                       "python": "3.12"})
    fit = assert_page(get(server, f"/kernels/kernels-community/relu?{query}"))
    assert ('Loads <strong class="mono">torch213-cxx11-cu130-x86_64-linux</strong>' in fit)
    assert ("torch212-cxx11-cu126-x86_64-linux</span>: Torch version (2.12) does not match "
            "environment Torch version (2.13)") in fit
    assert '<option value="cu130" selected>CUDA 13.0</option>' in fit


def test_raw_files_have_their_type_and_a_sandbox(server: HubServer, web_hub: DemoHub) -> None:
    store = LocalGitHub(web_hub.root)
    base = f"/kernels/acme/scale/raw/{web_hub.scale_v2}"
    for path, kind in (("benchmarks/results/torch-cpu/benchmark-bars-dark.png", "image/png"),
                       ("benchmarks/results/torch-cpu/benchmark-bars-light.svg",
                        "image/svg+xml"),
                       ("benchmarks/results/torch-cpu/benchmark.json", "application/json"),
                       ("README.md", "text/plain; charset=utf-8")):
        reply = get(server, f"{base}/{path}")
        assert reply.status == 200 and reply.headers["content-type"] == kind, path
        assert reply.body == store.read_file("acme/scale", web_hub.scale_v2, path)
        assert reply.headers["content-security-policy"].endswith("; sandbox")
        assert reply.headers["x-content-type-options"] == "nosniff"
    so = get(server, f"{base}/build/torch-cpu/metadata.json")
    assert so.status == 200 and so.headers["content-type"] == "application/json"
    binary = get(server, f"{base}/build/torch-cpu/_ops.py")
    assert binary.headers["content-type"] == "text/plain; charset=utf-8"
    # the hostile SVG is served as an image in a sandbox (no script, no origin)
    evil = get(server, f"/kernels/acme/evil/raw/{web_hub.evil_v1}/benchmarks/results/"
                       "torch-cpu/benchmark-bars-light.svg")
    assert evil.status == 200 and b"<script>" in evil.body
    assert "sandbox" in evil.headers["content-security-policy"]


def test_a_hostile_repository_renders_inert(server: HubServer) -> None:
    page = assert_page(get(server, "/kernels/acme/evil"))
    assert page.count(EVIL_SHOWN) >= 5  # commit title, variant, results: shown as text
    assert "<h1>Evil &lt;script&gt;alert(&quot;card&quot;)&lt;/script&gt;</h1>" in page
    assert "[click me](javascript:alert(&quot;link&quot;))" in page
    assert 'src="https://tracker.example/pixel.png"' in page  # CSP img-src 'self' blocks it
    assert "not a variant name the loaders know" in page
    assert EVIL_TEXT not in page


@pytest.mark.parametrize("target", [
    "/kernels/acme/nope", "/kernels/acme/..%2F..%2Fetc", "/kernels/-/x", "/kernels/acme/scale.git",
    "/kernels/acme/scale/tree/nope", "/kernels/acme/scale/tree/HEAD~1",
    "/kernels/acme/scale/tree/refs%2Fheads%2F..%2Fx", "/kernels/team/secret",
    "/kernels/acme/scale/raw/v2/no/such/file", "/kernels/acme/scale/raw/v2/..%2F..%2Fconfig",
    "/kernels/acme/scale/raw/v2/.git/config", "/kernels/acme/scale/raw/nope/README.md",
    "/kernels/team/secret/raw/main/README.md",
])
def test_what_does_not_exist_is_a_404_page(server: HubServer, target: str) -> None:
    reply = get(server, target)
    assert reply.status == 404, (target, reply.body[:300])
    if "/raw/" not in target:
        assert "Not found" in assert_page(reply, 404)
    else:
        assert reply.headers["content-type"].startswith("text/plain")
    assert "Traceback" not in server.log.read_text()


def test_private_kernels_need_a_token_which_the_pages_keep_in_a_cookie(
        server: HubServer) -> None:
    anonymous = get(server, "/kernels/team/secret")
    unknown = get(server, "/kernels/team/nothing")
    # a private repository reads exactly as a missing one
    assert anonymous.status == unknown.status == 404
    assert anonymous.text.replace("secret", "X") == unknown.text.replace("nothing", "X")
    # a wrong token: refused, no cookie; a token with a line break: refused, no 500
    wrong = login(server, "not-a-token-of-this-hub", "/kernels/team/secret")
    assert wrong.status == 401 and wrong.cookie() is None
    assert "That is not a token of this hub." in assert_page(wrong, 401)
    assert login(server, "a\x00b").status == 400
    # the read token: a cookie (HttpOnly, SameSite=Lax) and back to the page asked for
    ok = login(server, READ_TOKEN, "/kernels/team/secret")
    assert ok.status == 303 and ok.headers["location"] == "/kernels/team/secret"
    cookie = ok.cookie()
    assert cookie and READ_TOKEN not in ok.headers["set-cookie"]  # encoded, not echoed
    flags = ok.headers["set-cookie"].lower()
    assert "httponly" in flags and "samesite=lax" in flags and "path=/" in flags
    page = assert_page(get(server, "/kernels/team/secret", cookie=cookie))
    assert 'class="badge private"' in page and "export HF_TOKEN=" in page
    assert "Sign out" in page
    assert 'href="/kernels/team/secret"' in assert_page(get(server, "/", cookie=cookie))
    assert get(server, "/kernels/team/secret/raw/v1/README.md", cookie=cookie).status == 200
    # the cookie is for the pages only: the API never reads it (no write, no read by it)
    assert get(server, "/api/kernels/team/secret", cookie=cookie).status == 404
    assert get(server, "/kernels/team/secret/resolve/v1/README.md", cookie=cookie).status == 404
    write = login(server, WRITE_TOKEN).cookie()
    assert request(server, "POST", "/api/kernels/acme/scale/branch/x", body=b"{}",
                   cookie=write).status == 401
    # the API's own header still works on the pages (curl)
    header = {"Authorization": f"Bearer {READ_TOKEN}"}
    assert get(server, "/kernels/team/secret", headers=header).status == 200
    # a revoked or forged cookie: asked to sign in again, and the cookie is deleted
    forged = get(server, "/kernels/acme/scale", cookie="Zm9yZ2VkLXRva2Vu")
    assert forged.status == 401 and forged.cookie() == ""
    assert "Sign in" in assert_page(forged, 401)
    assert get(server, "/", cookie="%%%not-base64").status == 401
    # signing out deletes the cookie
    out = request(server, "POST", "/-/logout", cookie=cookie)
    assert out.status == 303 and out.cookie() == ""


def test_the_login_form_refuses_other_sites(server: HubServer) -> None:
    assert login(server, READ_TOKEN, origin="http://evil.example").status == 403
    assert login(server, READ_TOKEN, origin=server.url).status == 303
    for target in ("//evil.example/x", "https://evil.example/", "/\\evil.example"):
        assert login(server, READ_TOKEN, target).headers["location"] == "/"
    too_big = request(server, "POST", "/-/login", body=b"token=" + b"x" * 10_000,
                      headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert too_big.status == 413
    as_json = request(server, "POST", "/-/login", body=b'{"token": "x"}',
                      headers={"Content-Type": "application/json"})
    assert as_json.status == 415
    assert request(server, "POST", "/-/logout",
                   headers={"Origin": "http://evil.example"}).status == 403


def test_the_hub_api_beside_the_pages_is_unchanged(server: HubServer, web_hub: DemoHub) -> None:
    info = get(server, "/api/kernels/acme/scale/revision/v2")
    assert info.status == 200 and json.loads(info.body)["sha"] == web_hub.scale_v2
    readme = get(server, "/kernels/acme/scale/resolve/v2/README.md")
    assert readme.status == 200 and readme.headers["content-type"] == "application/octet-stream"
    missing = get(server, "/api/kernels/acme/nope")
    assert missing.status == 404 and missing.headers["x-error-code"] == "RepoNotFound"
    assert json.loads(missing.body)["error"]
    other = get(server, "/kernels/acme/scale/blob/v2/README.md")  # not a page, not the API
    assert other.status == 404 and "error" in json.loads(other.body)
    css = get(server, "/-/style.css")
    assert css.status == 200 and css.headers["content-type"] == "text/css; charset=utf-8"
    assert "prefers-color-scheme: dark" in css.text


def test_require_read_token_asks_every_visitor_to_sign_in(web_hub: DemoHub,
                                                          tmp_path: Path) -> None:
    with run_server(web_hub.root, tmp_path, "--require-read-token") as srv:
        index = get(srv, "/")
        page = assert_page(index, 401)
        assert 'action="/-/login"' in page and 'name="next" value="/"' in page
        assert "This hub needs a token to read" in page
        assert get(srv, "/kernels/acme/scale").status == 401
        assert get(srv, "/kernels/acme/scale/raw/v2/README.md").status == 401
        assert get(srv, "/-/style.css").status == 200  # the login page needs its style
        assert get(srv, "/-/login").status == 200
        cookie = login(srv, READ_TOKEN, "/kernels/acme/scale").cookie()
        page = assert_page(get(srv, "/kernels/acme/scale", cookie=cookie))
        assert "export HF_TOKEN=&lt;a read token of this hub&gt;" in page
        assert 'href="/kernels/team/secret"' in assert_page(get(srv, "/", cookie=cookie))


def test_no_pages_serves_the_api_only(web_hub: DemoHub, tmp_path: Path) -> None:
    with run_server(web_hub.root, tmp_path, "--no-pages") as srv:
        for target in ("/", "/kernels/acme/scale", "/-/style.css"):
            reply = get(srv, target)
            assert reply.status == 404 and "error" in json.loads(reply.body), target
        assert get(srv, "/api/kernels/acme/scale").status == 200
