"""``kernelkit serve``'s pages in a real browser: Chromium from the system packages, driven by
Playwright, against a real server on 127.0.0.1 (the hub of ``tests/webhub.py``).

Rendering (light and dark, charts loaded, the dark chart in dark mode), links (every link of a
kernel page answers; clicking through index, kernel, version, tag), search, the "which variant
loads" form, a hostile repository running no script (nor its SVG, opened directly), and the
read-token case: sign in through the form, see the private kernel, sign out.

Skips, saying why, without Playwright (``pip install playwright``: the dev extra) or Chromium
(``apt-get install chromium``: ``scripts/setup.sh`` does both where it can). With
``KERNELKIT_SERVE_SCREENSHOTS=DIR`` it also writes the screenshots docs/serve.md shows
(``DIR/serve-{index,kernel}-{light,dark}.png``).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("uvicorn")
pytest.importorskip("markdown_it")

from tests.hubserver import READ_TOKEN, HubServer, run_server
from tests.webhub import DemoHub

CHROMIUM = os.environ.get("KERNELKIT_TEST_CHROMIUM") or shutil.which("chromium") \
    or "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-dev-shm-usage", "--disable-extensions", "--disable-sync",
        "--disable-component-update", "--disable-default-apps", "--no-first-run",
        "--mute-audio"]
SHOTS = os.environ.get("KERNELKIT_SERVE_SCREENSHOTS")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed: pip install playwright (the dev extra; "
                    "scripts/setup.sh installs it)")
    if not Path(CHROMIUM).is_file():
        pytest.skip(f"no Chromium at {CHROMIUM}: apt-get install chromium (scripts/setup.sh "
                    "installs it where apt is available)")
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, timeout=60_000)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture(scope="module")
def server(web_hub: DemoHub, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubServer]:
    with run_server(web_hub.root, tmp_path_factory.mktemp("browser")) as srv:
        yield srv


class Tab:
    """A page of its own context, recording console errors and dialogs (alert & co)."""

    def __init__(self, browser: Any, base: str, scheme: str = "light") -> None:
        self.base = base
        self.context = browser.new_context(base_url=base, color_scheme=scheme,
                                           viewport={"width": 1200, "height": 900})
        self.page = self.context.new_page()
        self.page.set_default_timeout(30_000)
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error"
                     else None)
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))

    def goto(self, path: str, status: int = 200) -> Any:
        response = self.page.goto(path)
        assert response is not None and response.status == status, (path, response)
        return response

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def tab(browser: Any, server: HubServer) -> Iterator[Tab]:
    t = Tab(browser, server.url)
    yield t
    t.close()


def test_index_and_kernel_pages_render_and_their_links_lead_where_they_say(tab: Tab) -> None:
    page = tab.page
    tab.goto("/")
    assert page.title() == "Kernels \u00b7 kernelkit hub"
    assert page.locator("ul.kernels > li").count() == 3
    page.get_by_role("link", name="acme/scale", exact=True).click()
    page.wait_for_url("**/kernels/acme/scale")
    assert page.locator("main h1").first.inner_text().strip() == "acme/scale"
    assert page.locator("#card h1").inner_text() == "scale"
    assert page.locator("#variants table tbody tr").count() == 1
    # the charts are real images that loaded (and nothing failed to load)
    charts = page.locator("figure.plot img")
    assert charts.count() == 1
    assert charts.first.evaluate("img => img.complete && img.naturalWidth > 100")
    # every link of the page answers
    hrefs = page.locator("a[href^='/']").evaluate_all("as => as.map(a => a.href)")
    assert len(hrefs) > 15
    for href in sorted(set(hrefs)):
        assert tab.context.request.get(href).status == 200, href
    # click through: a release tag of v1, then back to the index by the crumbs
    page.get_by_role("link", name="v1.0.0", exact=True).click()
    page.wait_for_url("**/kernels/acme/scale/tree/v1.0.0")
    assert "Showing v1.0.0" in page.locator("section.head").inner_text()
    assert "First release of scale" in page.locator("section.head").inner_text()
    page.get_by_role("link", name="Kernels", exact=True).click()
    page.wait_for_url(f"{tab.base}/")
    assert tab.errors == [] and tab.dialogs == []


def test_search_and_the_which_variant_form(tab: Tab) -> None:
    page = tab.page
    tab.goto("/")
    page.get_by_role("searchbox", name="Search kernels").fill("cuda")
    page.get_by_role("button", name="Search").click()
    page.wait_for_url("**/?q=cuda")
    assert page.locator("ul.kernels > li a.name").all_inner_texts() == ["kernels-community/relu"]
    page.get_by_role("link", name="kernels-community/relu").click()
    page.wait_for_url("**/kernels/kernels-community/relu")
    form = page.locator("form.fit")
    form.locator("select[name=torch]").select_option("2.12")
    form.locator("select[name=compute]").select_option("cu130")
    form.get_by_role("button", name="Which variant loads?").click()
    page.wait_for_url("**compute=cu130**")
    box = page.locator("#fit").inner_text()
    # torch 2.12 with CUDA 13.0: the cu126 build is for another torch and CUDA major, the
    # cu130 one for torch 2.13; the universal build loads
    assert "Loads torch-universal." in box
    assert "torch212-cxx11-cu126-x86_64-linux: CUDA version (12.6) is not compatible" in box
    assert form.locator("select[name=compute]").input_value() == "cu130"
    assert tab.errors == []


@pytest.mark.parametrize(("scheme", "background", "chart"), [
    ("light", "rgb(255, 255, 255)", "-light.svg"), ("dark", "rgb(13, 17, 23)", "-dark.svg")])
def test_light_and_dark(browser: Any, server: HubServer, scheme: str, background: str,
                        chart: str) -> None:
    tab = Tab(browser, server.url, scheme)
    try:
        tab.goto("/kernels/acme/scale")
        page = tab.page
        assert page.evaluate("getComputedStyle(document.body).backgroundColor") == background
        src = page.locator("figure.plot img").evaluate("img => img.currentSrc")
        assert src.endswith(f"benchmark-bars{chart}"), src
        text = page.evaluate("getComputedStyle(document.body).color")
        assert text != background
    finally:
        tab.close()


def test_a_hostile_repository_runs_no_script(tab: Tab, server: HubServer,
                                             web_hub: DemoHub) -> None:
    page = tab.page
    tab.goto("/kernels/acme/evil")
    assert page.title() == "acme/evil \u00b7 kernelkit hub"
    assert "Evil <script>" in page.locator("#card h1").inner_text()  # shown as text
    # the card's tracking pixel is blocked by the Content-Security-Policy, nothing else fails
    assert all("tracker.example" in e for e in tab.errors), tab.errors
    before = server.log.read_text().count("/kernels/team/secret")
    # the SVG opened directly: sandboxed, its script neither alerts nor fetches
    tab.goto(f"/kernels/acme/evil/raw/{web_hub.evil_v1}/benchmarks/results/torch-cpu/"
             "benchmark-bars-light.svg")
    page.wait_for_timeout(500)
    assert tab.dialogs == []
    assert server.log.read_text().count("/kernels/team/secret") == before


def test_the_read_token_case_sign_in_see_the_private_kernel_sign_out(
        browser: Any, web_hub: DemoHub, tmp_path: Path) -> None:
    with run_server(web_hub.root, tmp_path, "--require-read-token") as srv:
        tab = Tab(browser, srv.url)
        try:
            page = tab.page
            tab.goto("/kernels/team/secret", status=401)
            assert "This hub needs a token to read" in page.locator("main").inner_text()
            page.get_by_label("Token").fill("not-a-token-of-this-hub")
            page.get_by_role("button", name="Sign in").click()
            assert "That is not a token of this hub." in page.locator("main").inner_text()
            page.get_by_label("Token").fill(READ_TOKEN)
            page.get_by_role("button", name="Sign in").click()
            page.wait_for_url("**/kernels/team/secret")
            assert page.locator("main h1").first.inner_text().startswith("team/secret")
            assert "export HF_TOKEN=" in page.locator("#usage").inner_text()
            # the token is in an HttpOnly cookie: no script could read it
            assert page.evaluate("document.cookie") == ""
            [cookie] = tab.context.cookies()
            assert cookie["httpOnly"] and cookie["sameSite"] == "Lax"
            page.get_by_role("link", name="Kernels", exact=True).click()
            assert page.locator("ul.kernels > li").count() == 4  # the private one too
            page.get_by_role("button", name="Sign out").click()
            page.wait_for_url(f"{srv.url}/")
            assert "Sign in" in page.locator("main").inner_text()
            assert tab.context.cookies() == []
            assert all("401" in e for e in tab.errors), tab.errors  # the 401 pages themselves
        finally:
            tab.close()


@pytest.mark.skipif(not SHOTS, reason="set KERNELKIT_SERVE_SCREENSHOTS=DIR to write the "
                    "screenshots of docs/serve.md")
def test_screenshots_for_the_docs(browser: Any, web_hub: DemoHub, tmp_path: Path) -> None:
    hub = tmp_path / "hub"
    shutil.copytree(web_hub.root, hub)
    shutil.rmtree(hub / "acme" / "evil.git")  # the docs show the kernels a team has
    out = Path(str(SHOTS))
    out.mkdir(parents=True, exist_ok=True)
    with run_server(hub, tmp_path) as srv:
        for scheme in ("light", "dark"):
            tab = Tab(browser, srv.url, scheme)
            try:  # signed in with a read token, so the private kernel shows too
                tab.goto("/-/login")
                tab.page.get_by_label("Token").fill(READ_TOKEN)
                tab.page.get_by_role("button", name="Sign in").click()
                tab.page.wait_for_url(f"{srv.url}/")
                tab.page.screenshot(path=str(out / f"serve-index-{scheme}.png"),
                                    clip={"x": 0, "y": 0, "width": 1200, "height": 420})
                tab.goto("/kernels/acme/scale")
                tab.page.screenshot(path=str(out / f"serve-kernel-{scheme}.png"),
                                    full_page=True)
            finally:
                tab.close()
