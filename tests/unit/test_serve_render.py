"""The pieces of ``kernelkit serve``'s web pages without a server: the card renderer (hostile
Markdown), what each variant needs, the loader's choice for a described machine, escaping of
every field a publisher controls, and where the login form may send a browser."""

from __future__ import annotations

import pytest

pytest.importorskip("markdown_it")
pytest.importorskip("starlette")

from kernelkit.serve.card import render_card, summary
from kernelkit.serve.catalog import KernelView, Results, Summary, VariantInfo, Version
from kernelkit.serve.fit import check_fit, fit_options, requirement
from kernelkit.serve.pages import safe_next
from kernelkit.serve.render import Usage, Visitor, index_page, kernel_page
from kernelkit.serve.store import CommitInfo, Entry
from tests.webhub import assert_inert

EVIL = '<script>alert("x")</script>"\'><img src=x onerror=alert(1)>'
RAW = "/kernels/acme/demo/raw/0123abcd"


def test_card_raw_html_and_dangerous_links_come_out_as_text() -> None:
    html = render_card(
        "# T <script>alert(1)</script>\n\n<img src=x onerror=alert(2)>\n\n"
        "<div style='position:fixed'>x</div>\n\n[a](javascript:alert(3)) "
        "[b](vbscript:x) [c](data:text/html,<script>alert(4)</script>)\n\n"
        '[ok](https://example.org/ "t\\"><script>alert(5)</script>")\n', RAW)
    assert assert_inert(html, allowed=set()) == [("a", "https://example.org/")]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(2)&gt;" in html
    assert "[a](javascript:alert(3))" in html  # not a link at all
    assert ('<a href="https://example.org/" title="t&quot;&gt;&lt;script&gt;alert(5)&lt;/script'
            '&gt;" rel="nofollow noopener noreferrer">ok</a>') in html


def test_card_relative_targets_point_at_the_repository_files() -> None:
    html = render_card("![chart](<benchmarks/results/a b.svg>) [script](./benchmarks/b.py#L3) "
                       "[out](../../../etc/passwd) ![up](../x.png) [top](#usage) "
                       "[abs](/kernels/x/y)\n", RAW)
    assert f'src="{RAW}/benchmarks/results/a%20b.svg"' in html
    assert f'href="{RAW}/benchmarks/b.py#L3"' in html
    assert 'href="#"' in html and 'src=""' in html  # above the repository
    assert 'href="#usage"' in html and 'href="/kernels/x/y"' in html


def test_card_front_matter_is_not_shown_and_summary_is_the_first_paragraph() -> None:
    text = "---\nlicense: mit\n---\n# relu\n\nThe **ReLU** `act`\nfor everyone.\n\nMore.\n"
    assert "license" not in render_card(text, RAW)
    assert summary(text) == "The ReLU act for everyone."
    assert summary("# only a title\n") == ""
    assert len(summary("word " * 200)) == 240


@pytest.mark.parametrize(("name", "needs"), [
    ("torch213-cxx11-cu130-x86_64-linux",
     "Linux x86_64 · torch 2.13 (C++11 ABI) · CUDA 13.0 to 13.x · Python 3.9 or later"),
    ("torch-stable-abi211-cpu-aarch64-linux",
     "Linux aarch64 · torch 2.11 or later (stable ABI) · CPU · Python 3.9 or later"),
    ("tvm-ffi01-cpu-x86_64-linux", "Linux x86_64 · tvm-ffi 0.1 · CPU · Python 3.9 or later"),
    ("torch-2.13-cxx11-cpu-cpython-3.12-abi3-x86_64-linux",
     "Linux x86_64 · torch 2.13 (C++11 ABI) · CPU · Python 3.12 or later"),
    ("torch210-metal-aarch64-darwin",
     "macOS aarch64 · torch 2.10 · Metal (macOS 26.0 or later) · Python 3.9 or later"),
    ("torch-cuda", "any CUDA machine, any torch (Python code only)"),
    ("torch-universal", "any machine, any torch (Python code only)"),
    ("<b>x</b>", "not a variant name the loaders know: never chosen"),
])
def test_requirement_says_what_a_machine_needs(name: str, needs: str) -> None:
    assert requirement(name) == needs


def test_check_fit_is_the_loaders_choice_for_the_machine_described() -> None:
    names = ["torch213-cxx11-cpu-x86_64-linux", "torch213-cxx11-cu126-x86_64-linux",
             "torch212-cxx11-cu130-x86_64-linux", "torch-universal"]
    options = fit_options(names)
    assert [v for v, _ in options.compute] == ["cpu", "cu126", "cu130"]
    assert [v for v, _ in options.torch] == ["2.13", "2.12"]
    fit = check_fit(names, options, {"torch": "2.13", "compute": "cu130",
                                     "platform": "x86_64-linux", "python": "3.12"})
    assert fit is not None
    verdict = {d.variant: (d.accepted, d.reason) for d in fit.decisions}
    # CUDA 12.6 builds do not load on CUDA 13 (other major); the torch 2.12 one needs 2.12
    assert verdict["torch213-cxx11-cu126-x86_64-linux"][0] is False
    assert "Torch version (2.12)" in verdict["torch212-cxx11-cu130-x86_64-linux"][1]
    assert fit.decisions[0].variant == "torch-universal" and fit.decisions[0].accepted
    cpu = check_fit(names, options, {"torch": "2.13", "compute": "cpu"})
    assert cpu is not None and cpu.decisions[0].variant == "torch213-cxx11-cpu-x86_64-linux"
    # no form sent, or a value that was not offered: no answer (nothing parsed further)
    assert check_fit(names, options, {}) is None
    assert check_fit(names, options, {"compute": "cu999"}) is None
    assert check_fit(names, options, {"compute": "cpu", "torch": "2.13; rm -rf"}) is None


def _view(**over: object) -> KernelView:
    info = CommitInfo("c" * 40, EVIL, "2026-01-02T03:04:05.000Z", EVIL, "")
    fields: dict[str, object] = dict(
        repo_id="acme/demo", private=False, revision="v1", commit="c" * 40, info=info,
        version=1, versions=(Version("v1", 1, "c" * 40, info.date, EVIL, ("v1.0.0",),
                                     ("v1.0.0",)),),
        other_branches=(("main", "d" * 40),), tags=(("v1.0.0", "c" * 40),),
        variants=(VariantInfo(EVIL, 1, 10), VariantInfo("torch-cpu", 4, 4096)),
        card=render_card(f"# {EVIL}\n", RAW), card_note=None,
        results=(Results("torch-cpu", "benchmarks/results/torch-cpu/benchmark.json", {
            "schema": "kernelkit.benchmark/1", "created": EVIL,
            "machine": {"device": {"type": EVIL, "name": EVIL}, "torch": EVIL, "os": EVIL},
            "cases": [{"name": EVIL, "status": EVIL, "series": {"kernel": {"stats": {
                "median_ms": EVIL, "ci_low_ms": float("nan")}}},
                "speedups": {EVIL: {"value": 1.5, "ci_low": 1.2, "ci_high": 1.9,
                                    "verdict": EVIL}}}, "not a case", 7],
        }, None, (("bars", f"benchmarks/results/{EVIL}.svg", None),)),),
        files=(Entry(EVIL, "blob", "e" * 40, 3),))
    fields.update(over)
    return KernelView(**fields)  # type: ignore[arg-type]


USAGE = Usage(base_url='http://h"><script>x</script>', kernelkit_trusted=False,
              server_trusted=True, token_needed=True)


def test_kernel_page_escapes_every_field_a_publisher_or_client_controls() -> None:
    names = [EVIL, "torch-cpu"]
    page = kernel_page(_view(), USAGE, fit_options(names), None,
                       Visitor(False, f"/kernels/acme/demo?q={EVIL}"))
    assert_inert(page)
    assert page.count("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;") >= 8
    assert 'http://h&quot;&gt;&lt;script&gt;x&lt;/script&gt;' in page
    # hostile JSON types are shown as text or a dash, never crash the page
    assert "1.50\u00d7 [1.20, 1.90]" in page
    # the plot and file URLs are quoted path segments, not markup
    assert "benchmarks/results/%3Cscript%3Ealert%28%22x%22%29" in page


def test_usage_line_adds_trust_and_the_token_only_when_needed() -> None:
    page = kernel_page(_view(), USAGE, fit_options([]), None, Visitor(False, "/"))
    assert ('kernelkit.get_kernel(&quot;acme/demo&quot;, version=1, trust_remote_code=True)'
            in page)
    assert 'kernels.get_kernel(&quot;acme/demo&quot;, version=1)</code>' in page
    assert "export HF_TOKEN=" in page
    trusted = Usage("http://hub", kernelkit_trusted=True, server_trusted=False,
                    token_needed=False)
    page = kernel_page(_view(revision="v1.0.0", version=None), trusted, fit_options([]), None,
                       Visitor(False, "/"))
    assert 'kernelkit.get_kernel(&quot;acme/demo&quot;, revision=&quot;v1.0.0&quot;)' in page
    assert ('kernels.get_kernel(&quot;acme/demo&quot;, revision=&quot;v1.0.0&quot;, '
            'trust_remote_code=True)') in page
    assert "HF_TOKEN" not in page


def test_index_page_escapes_the_query_and_the_summaries() -> None:
    s = Summary("acme/demo", "v1", "c" * 40, "", EVIL, (EVIL,), ("v1.0.0",))
    page = index_page([(s, True)], 3, EVIL, 10, Visitor(True, "/"))
    assert_inert(page)
    assert f'value="{EVIL.replace("&", "&amp;").replace("<", "&lt;")[:10]}' in page
    assert 'class="badge private"' in page and "Sign out" in page
    empty = index_page([], 3, "nothing", 10, Visitor(False, "/?q=nothing"))
    assert "Nothing matches" in empty and "next=%2F%3Fq%3Dnothing" in empty


@pytest.mark.parametrize(("value", "expected"), [
    ("/kernels/acme/demo?x=1", "/kernels/acme/demo?x=1"), ("/", "/"), (None, "/"),
    ("//evil.example/", "/"), ("/\\evil.example", "/"), ("https://evil.example/", "/"),
    ("/a\\b", "/"), ("/a\nb", "/"), ("javascript:alert(1)", "/"), ("/" + "a" * 3000, "/"),
])
def test_login_sends_the_browser_back_to_this_site_only(value: str | None,
                                                        expected: str) -> None:
    assert safe_next(value) == expected
