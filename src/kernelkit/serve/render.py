"""The hub's web pages as HTML strings (generators return strings; ``serve/pages.py`` sends).

Every value goes through :func:`e` (``html.escape`` with quotes) or :func:`url_segment`
before it reaches markup; the only HTML not built here is the card, which ``serve/card.py``
renders with raw HTML disabled. No script anywhere: the pages work with a plain form and links,
and their Content-Security-Policy forbids scripts outright.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

from kernelkit.serve.catalog import KernelView, Results, Summary, Version
from kernelkit.serve.fit import Fit, FitOptions, requirement

STYLESHEET = "/-/style.css"
ICON = "/-/icon.svg"


def e(value: object) -> str:
    return html.escape(str(value), quote=True)


def url_segment(value: str) -> str:
    return quote(value, safe="")


def kernel_url(repo_id: str, revision: str | None = None) -> str:
    org, name = repo_id.split("/", 1)
    base = f"/kernels/{url_segment(org)}/{url_segment(name)}"
    return base if revision is None else f"{base}/tree/{url_segment(revision)}"


def raw_url(repo_id: str, commit: str, path: str = "") -> str:
    org, name = repo_id.split("/", 1)
    base = f"/kernels/{url_segment(org)}/{url_segment(name)}/raw/{url_segment(commit)}"
    return f"{base}/{quote(path)}" if path else base


@dataclass(frozen=True)
class Visitor:
    """Who looks: signed in through the page's cookie (or a token header), and where the
    login form should send them back to."""

    signed_in: bool
    path: str  # this page's path and query, for the login form's ``next``


def size(n: int) -> str:
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"  # pragma: no cover


def when(date: str) -> str:
    """The Hub's ``2026-01-02T10:11:12.000Z`` as ``2026-01-02 10:11 UTC``."""
    return f"{date[:10]} {date[11:16]} UTC" if len(date) >= 16 and date[10] == "T" else date


# --- the frame -----------------------------------------------------------------------------


def layout(title: str, body: str, visitor: Visitor, *, q: str = "") -> str:
    account = (
        '<form method="post" action="/-/logout" class="inline">'
        '<button type="submit" class="link">Sign out</button></form>' if visitor.signed_in else
        f'<a href="/-/login?{urlencode({"next": visitor.path})}">Sign in with a token</a>')
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="referrer" content="same-origin">
<title>{e(title)}</title>
<link rel="stylesheet" href="{STYLESHEET}">
<link rel="icon" href="{ICON}" type="image/svg+xml">
</head>
<body>
<header class="top">
<a class="brand" href="/">kernelkit hub</a>
<form class="search" method="get" action="/" role="search">
<input type="search" name="q" value="{e(q)}" placeholder="Search kernels"
 aria-label="Search kernels" maxlength="200">
<button type="submit">Search</button>
</form>
<nav class="account">{account}</nav>
</header>
<main>
{body}
</main>
<footer>Served by <code>kernelkit serve</code> &middot; the Hub API is here too:
point <code>HF_ENDPOINT</code> at this address</footer>
</body>
</html>
"""


def error_page(status: int, title: str, message: str, visitor: Visitor) -> str:
    hint = ""
    if status == 401 and not visitor.signed_in:
        hint = login_form(visitor.path, "")
    body = (f'<section class="error"><h1>{e(title)}</h1><p>{e(message)}</p>'
            f'<p class="status">HTTP {status}</p>{hint}'
            '<p><a href="/">All kernels</a></p></section>')
    return layout(f"{title} \u00b7 kernelkit hub", body, visitor)


def login_form(next_path: str, message: str) -> str:
    note = f'<p class="warn" role="alert">{e(message)}</p>' if message else ""
    return f"""<form class="login" method="post" action="/-/login">
{note}<label for="token">Token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required
 maxlength="512">
<input type="hidden" name="next" value="{e(next_path)}">
<button type="submit">Sign in</button>
<p class="small">A read or write token of this hub. It is kept in an HttpOnly cookie for this
site and used only to read these pages, never to write.</p>
</form>"""


def login_page(next_path: str, message: str, visitor: Visitor) -> str:
    body = f'<section class="narrow"><h1>Sign in</h1>{login_form(next_path, message)}</section>'
    return layout("Sign in \u00b7 kernelkit hub", body, visitor)


# --- the index -----------------------------------------------------------------------------


def index_page(found: list[tuple[Summary, bool]], total: int, q: str, limit: int,
               visitor: Visitor) -> str:
    if q:
        head = (f'<h1>Kernels matching \u201c{e(q)}\u201d</h1><p class="muted">{len(found)} of '
                f'{total} kernels. <a href="/">Show all</a></p>')
    else:
        head = f'<h1>Kernels</h1><p class="muted">{total} on this hub.</p>'
    shown = found[:limit]
    more = (f'<p class="muted">{len(found) - limit} more: narrow the search.</p>'
            if len(found) > limit else "")
    if not found:
        empty = ("Nothing matches. Search looks in the names, descriptions, variants and "
                 "release tags." if q else "No kernels yet: publish one with "
                 "<code>kernelkit upload --hub hf</code>.")
        return layout("kernelkit hub", f'{head}<p class="empty">{empty}</p>', visitor, q=q)
    items = "\n".join(_summary_item(s, private) for s, private in shown)
    return layout("Kernels \u00b7 kernelkit hub",
                  f'{head}<ul class="kernels">\n{items}\n</ul>{more}', visitor, q=q)


def _summary_item(s: Summary, private: bool) -> str:
    badges = '<span class="badge private">private</span>' if private else ""
    if s.latest:
        badges += f'<span class="badge">{e(s.latest)}</span>'
    if s.tags:
        badges += f'<span class="badge tag">{e(s.tags[0])}</span>'
    backends = s.backends
    facts = []
    if s.variants:
        plural = "s" if len(s.variants) != 1 else ""
        kinds = f" ({', '.join(backends)})" if backends else ""
        facts.append(f"{len(s.variants)} variant{plural}{kinds}")
    if s.date:
        facts.append(f"updated {when(s.date)}")
    desc = f'<p class="desc">{e(s.description)}</p>' if s.description else ""
    return (f'<li><a class="name" href="{e(kernel_url(s.repo_id))}">{e(s.repo_id)}</a>{badges}'
            f'{desc}<p class="muted small">{e(" · ".join(facts) or "no versions yet")}</p></li>')


# --- a kernel ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Usage:
    """What the usage snippet needs to know beyond the view."""

    base_url: str
    kernelkit_trusted: bool  # the org is in kernelkit's default trusted publishers
    server_trusted: bool  # --trusted-publisher: upstream kernels trusts it through this hub
    token_needed: bool  # private, or --require-read-token


def kernel_page(view: KernelView, usage: Usage, options: FitOptions, fit: Fit | None,
                visitor: Visitor) -> str:
    sections = [
        _kernel_head(view),
        _usage(view, usage),
        _card(view),
        _variants(view, options, fit),
        _benchmarks(view),
        _versions(view),
        _files(view),
    ]
    return layout(f"{view.repo_id} \u00b7 kernelkit hub", "\n".join(sections), visitor)


def _kernel_head(view: KernelView) -> str:
    private = '<span class="badge private">private</span>' if view.private else ""
    info = view.info
    line = (f'<a href="{e(kernel_url(view.repo_id, view.commit))}" class="mono" '
            f'title="this exact commit">{e(view.commit[:12])}</a>')
    if info is not None:
        line += f" \u00b7 {e(when(info.date))} \u00b7 {e(info.title)}"
    return (f'<section class="head"><p class="crumbs"><a href="/">Kernels</a> / '
            f'{e(view.repo_id.split("/")[0])}</p>'
            f'<h1>{e(view.repo_id)}{private}</h1>'
            f'<p class="muted">Showing <strong>{e(view.revision)}</strong>: {line}</p></section>')


def _usage(view: KernelView, usage: Usage) -> str:
    repo = view.repo_id
    pick = (f"version={view.version}" if view.version is not None
            else f"revision={_py(view.revision)}")
    kk_trust = "" if usage.kernelkit_trusted else ", trust_remote_code=True"
    up_trust = "" if usage.server_trusted else ", trust_remote_code=True"
    token = "\nexport HF_TOKEN=<a read token of this hub>" if usage.token_needed else ""
    env = f"export HF_ENDPOINT={usage.base_url} KERNELKIT_HUB=hf{token}"
    kernelkit = (f"import kernelkit\n\nkernel = kernelkit.get_kernel({_py(repo)}, {pick}"
                 f"{kk_trust})")
    upstream = f"import kernels\n\nkernel = kernels.get_kernel({_py(repo)}, {pick}{up_trust})"
    why = [] if usage.kernelkit_trusted else [(
        f"{e(repo.split('/')[0])} is not one of kernelkit's default trusted publishers, so the "
        "loader asks for <code>trust_remote_code=True</code> (or the organisation in "
        "<code>KERNELKIT_TRUSTED_PUBLISHERS</code>): loading a kernel runs its code.")]
    return (f'<section id="usage"><h2>Use it</h2><pre class="code"><code>{e(env)}</code></pre>'
            f'<pre class="code"><code>{e(kernelkit)}</code></pre>'
            f'<details><summary>With upstream <code>kernels</code></summary>'
            f'<pre class="code"><code>{e(upstream)}</code></pre></details>'
            + "".join(f'<p class="small muted">{w}</p>' for w in why) + "</section>")


def _py(text: str) -> str:
    """``text`` as a Python string literal: ``"org/name"`` (ids and ref names have no quotes or
    backslashes; anything else is written by ``repr``)."""
    return f'"{text}"' if text.isprintable() and not set(text) & set("\"'\\") else repr(text)


def _card(view: KernelView) -> str:
    if view.card is None:
        return f'<section id="card"><p class="muted">{e(view.card_note or "")}</p></section>'
    return f'<section id="card" class="card">{view.card}</section>'


def _variants(view: KernelView, options: FitOptions, fit: Fit | None) -> str:
    if not view.variants:
        return ('<section id="variants"><h2>Variants</h2><p class="muted">No build variants at '
                'this revision.</p></section>')
    rows = "\n".join(
        f'<tr><td class="mono">{e(v.name)}</td><td>{e(requirement(v.name))}</td>'
        f'<td class="num">{e(size(v.size))}</td><td class="num">{v.files}</td></tr>'
        for v in view.variants)
    table = ('<table class="variants"><thead><tr><th>variant</th><th>loads on</th>'
             '<th class="num">size</th><th class="num">files</th></tr></thead>'
             f'<tbody>\n{rows}\n</tbody></table>')
    return (f'<section id="variants"><h2>Variants</h2>{table}'
            f'{_fit_form(view, options, fit)}</section>')


def _select(name: str, label: str, offered: Iterable[tuple[str, str]], chosen: str,
            blank: str | None = None) -> str:
    opts = [f'<option value="">{e(blank)}</option>'] if blank is not None else []
    opts += [f'<option value="{e(v)}"{" selected" if v == chosen else ""}>{e(text)}</option>'
             for v, text in offered]
    return (f'<label>{e(label)} <select name="{e(name)}">{"".join(opts)}</select></label>')


def _fit_form(view: KernelView, options: FitOptions, fit: Fit | None) -> str:
    s = fit.system if fit else None
    torch = f"{s.torch_version[0]}.{s.torch_version[1]}" if s and s.torch_version else (
        options.torch[0][0] if options.torch else "")
    compute = s.compute_tag if s else "cpu"
    platform = f"{s.cpu}-{s.os}" if s else "x86_64-linux"
    python = f"{s.python_version[0]}.{s.python_version[1]}" if s else "3.12"
    form = (f'<form class="fit" method="get" action="#fit">'
            f'{_select("torch", "torch", options.torch, torch, "none")}'
            f'{_select("compute", "backend", options.compute, compute)}'
            f'{_select("platform", "platform", options.platform, platform)}'
            f'{_select("python", "Python", options.python, python)}'
            '<button type="submit">Which variant loads?</button></form>')
    result = ""
    if fit is not None:
        best = next((d for d in fit.decisions if d.accepted), None)
        verdict = (f'<p class="ok">Loads <strong class="mono">{e(best.variant)}</strong>.</p>'
                   if best else '<p class="warn">No variant of this revision loads there.</p>')
        rows = "".join(
            f'<li class="{"ok" if d.accepted else "no"}"><span class="mono">{e(d.variant)}'
            f'</span>: {e(d.reason)}</li>' for d in fit.decisions)
        result = (f'<p class="muted small">{e(fit.system.describe())}</p>{verdict}'
                  f'<ul class="decisions">{rows}</ul>')
    return (f'<div id="fit" class="fitbox"><h3>Which variant fits your machine?</h3>'
            f'<p class="small muted">The loader\'s own choice (kernelkit and kernels 0.19 decide '
            f'alike), for the machine you describe.</p>{form}{result}</div>')


# --- benchmarks ----------------------------------------------------------------------------


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _ms(value: Any) -> str:
    x = _num(value)
    if x is None:
        return "\u2013"
    return f"{x * 1000:.3g} \u00b5s" if x < 1 else f"{x:.4g} ms"


def _benchmarks(view: KernelView) -> str:
    if not view.results:
        return ""
    parts = [_results(view, r) for r in view.results]
    return ('<section id="benchmarks"><h2>Benchmarks</h2><p class="small muted">Measured by '
            '<code>kernelkit benchmark --save</code> on the uploaded build; speedups are '
            'medians\u2019 ratios with 95 % intervals (above 1: the kernel is faster).</p>'
            + "\n".join(parts) + "</section>")


def _results(view: KernelView, r: Results) -> str:
    json_link = f'<a href="{e(raw_url(view.repo_id, view.commit, r.path))}">JSON</a>'
    head = f'<h3 class="mono">{e(r.variant)}</h3>'
    if r.data is None:
        return (f'{head}<p class="warn">{e(r.path)}: {e(r.error)}</p>'
                f'{_plots(view, r)}')
    data = r.data
    where = _machine(_dict(data.get("machine")), data.get("created"))
    listed = data.get("cases")
    cases: list[Any] = listed if isinstance(listed, list) else []
    roles: list[str] = []
    for c in cases:
        for role in _dict(_dict(c).get("speedups")):
            if isinstance(role, str) and role not in roles:
                roles.append(role)
    rows = "\n".join(_case_row(_dict(c), roles) for c in cases)
    cols = "".join(f'<th>vs {e(role)}</th>' for role in roles)
    table = (f'<table class="bench"><thead><tr><th>case</th><th>result</th>'
             f'<th class="num">kernel median [95 % CI]</th>{cols}</tr></thead>'
             f'<tbody>\n{rows}\n</tbody></table>')
    return (f'{head}<p class="small muted">{e(" · ".join(where))} \u00b7 {json_link}</p>'
            f'{table}{_plots(view, r)}')


def _machine(machine: dict[str, Any], created: Any) -> list[str]:
    """Where a result was measured: ``CPU x86_64 (2 cores) · Linux ... · torch 2.13.0+cpu ·
    Python 3.11.7 · <date>`` (each part only when the file has it)."""
    device = _dict(machine.get("device"))
    kind, name = device.get("type"), device.get("name")
    what = f"CPU {name}" if kind == "cpu" and name else name or kind
    cores = machine.get("cpu_count")
    if kind == "cpu" and _num(cores) is not None:
        what = f"{what} ({cores} cores)"
    parts = [what, machine.get("os"),
             f"torch {machine['torch']}" if machine.get("torch") else None,
             f"CUDA {machine['cuda']}" if machine.get("cuda") else None,
             f"Python {machine['python']}" if machine.get("python") else None,
             when(created) if isinstance(created, str) else None]
    return [str(p) for p in parts if p]


def _case_row(case: dict[str, Any], roles: list[str]) -> str:
    status = str(case.get("status") or "")
    stats = _dict(_dict(_dict(case.get("series")).get("kernel")).get("stats"))
    median = _ms(stats.get("median_ms"))
    if _num(stats.get("ci_low_ms")) is not None and _num(stats.get("ci_high_ms")) is not None:
        median += f" [{_ms(stats.get('ci_low_ms'))}, {_ms(stats.get('ci_high_ms'))}]"
    cells = []
    for role in roles:
        s = _dict(_dict(case.get("speedups")).get(role))
        value, lo, hi = _num(s.get("value")), _num(s.get("ci_low")), _num(s.get("ci_high"))
        verdict = str(s.get("verdict") or "")
        text = "\u2013" if value is None else f"{value:.2f}\u00d7" + (
            f" [{lo:.2f}, {hi:.2f}]" if lo is not None and hi is not None else "")
        cells.append(f'<td class="{e(_verdict_class(verdict))}">{e(text)}</td>')
    return (f'<tr><td class="mono">{e(case.get("name") or "")}</td>'
            f'<td class="{e(_status_class(status))}">{e(status)}</td>'
            f'<td class="num">{e(median)}</td>{"".join(cells)}</tr>')


def _verdict_class(verdict: str) -> str:
    return {"faster": "ok", "slower": "no"}.get(verdict, "")


def _status_class(status: str) -> str:
    return {"ok": "ok", "wrong": "no", "error": "no"}.get(status, "")


def _plots(view: KernelView, r: Results) -> str:
    out = []
    for kind, light, dark in r.plots:
        alt = f"{kind} chart of the benchmark of {r.variant}"
        source = (f'<source media="(prefers-color-scheme: dark)" '
                  f'srcset="{e(raw_url(view.repo_id, view.commit, dark))}">' if dark else "")
        out.append(f'<figure class="plot"><picture>{source}'
                   f'<img src="{e(raw_url(view.repo_id, view.commit, light))}" alt="{e(alt)}" '
                   f'loading="lazy"></picture></figure>')
    return f'<div class="plots">{"".join(out)}</div>' if out else ""


# --- versions and files --------------------------------------------------------------------


def _versions(view: KernelView) -> str:
    if not view.versions and not view.other_branches:
        return ""
    rows = "\n".join(_version_row(view, v) for v in view.versions)
    others = "".join(
        f'<li><a href="{e(kernel_url(view.repo_id, b))}" class="mono">{e(b)}</a> '
        f'<span class="mono muted">{e(c[:12])}</span></li>' for b, c in view.other_branches)
    loose = [(t, c) for t, c in view.tags
             if not any(t in v.tags for v in view.versions)]
    tags = "".join(f'<li><a href="{e(kernel_url(view.repo_id, t))}" class="mono">{e(t)}</a> '
                   f'<span class="mono muted">{e(c[:12])}</span></li>' for t, c in loose)
    table = ('<table class="versions"><thead><tr><th>version</th><th>release tags</th>'
             '<th>head</th><th>updated</th><th>last change</th></tr></thead>'
             f'<tbody>\n{rows}\n</tbody></table>') if view.versions else ""
    extra = (f'<h3>Other branches</h3><ul class="refs">{others}</ul>' if others else "") + (
        f'<h3>Other tags</h3><ul class="refs">{tags}</ul>' if tags else "")
    return f'<section id="versions"><h2>Versions and tags</h2>{table}{extra}</section>'


def _version_row(view: KernelView, v: Version) -> str:
    current = ' class="current"' if v.commit == view.commit and view.revision == v.branch else ""
    tags = ", ".join(
        f'<a href="{e(kernel_url(view.repo_id, t))}" class="mono">{e(t)}</a>'
        + (" (head)" if t in v.head_tags else "") for t in v.tags) or "none"
    return (f'<tr{current}><td><a href="{e(kernel_url(view.repo_id, v.branch))}" class="mono">'
            f'{e(v.branch)}</a></td><td>{tags}</td><td class="mono">{e(v.commit[:12])}</td>'
            f'<td>{e(when(v.date))}</td><td>{e(v.title)}</td></tr>')


MAX_FILES_SHOWN = 500


def _files(view: KernelView) -> str:
    if not view.files:
        return ""
    shown = view.files[:MAX_FILES_SHOWN]
    rows = "\n".join(
        f'<tr><td><a href="{e(raw_url(view.repo_id, view.commit, f.path))}" class="mono">'
        f'{e(f.path)}</a></td><td class="num">{e(size(f.size))}</td></tr>' for f in shown)
    more = (f'<p class="muted small">{len(view.files) - MAX_FILES_SHOWN} more files not '
            'listed.</p>' if len(view.files) > MAX_FILES_SHOWN else "")
    total = size(sum(f.size for f in view.files))
    return (f'<section id="files"><details><summary>Files ({len(view.files)}, {e(total)})'
            f'</summary><table class="files"><tbody>\n{rows}\n</tbody></table>{more}'
            '</details></section>')
