"""A kernel's card (``README.md`` on the hub, from the project's ``CARD.md``) as safe HTML.

Rendered by markdown-it-py (CommonMark plus tables and strikethrough) with raw HTML *off*:
``<script>``, ``<img onerror=...>`` and any other tag in a card come out as text. Link and image
targets pass markdown-it's ``validateLink`` (no ``javascript:``, ``vbscript:``, ``file:``,
non-image ``data:``); a relative target (``docs/plot.svg``) is rewritten to the repository's
file at the revision shown (``raw_base``), and every link gets ``rel="nofollow noopener
noreferrer"``. The page's Content-Security-Policy (``img-src 'self'``) keeps images from other
sites from loading, so a card cannot make a reader's browser call out.

A YAML front-matter block (``---`` ... ``---``, the Hub's model-card metadata) is not shown.
"""

from __future__ import annotations

import posixpath
import re
from typing import Any
from urllib.parse import quote, urlsplit

from markdown_it import MarkdownIt
from markdown_it.token import Token

_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n.*?\r?\n---[ \t]*(?:\r?\n|\Z)", re.S)
_REL = "nofollow noopener noreferrer"


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    return md


_MD = _parser()


def strip_front_matter(text: str) -> str:
    return _FRONT_MATTER.sub("", text, count=1)


def render_card(text: str, raw_base: str) -> str:
    """``text`` (Markdown) as HTML; relative link and image targets point under ``raw_base``
    (e.g. ``/kernels/acme/relu/raw/<commit>``), which the caller has quoted already."""
    tokens = _MD.parse(strip_front_matter(text))
    for token in tokens:
        for child in token.children or []:
            _fix_target(child, raw_base)
    html: str = _MD.renderer.render(tokens, _MD.options, {})
    return html


def _fix_target(token: Token, raw_base: str) -> None:
    attr = {"link_open": "href", "image": "src"}.get(token.type)
    if attr is None:
        return
    target = token.attrGet(attr)
    if isinstance(target, str):
        fixed = _relative_to(target, raw_base)
        # a path above the repository: a link that goes nowhere, an image that loads nothing
        token.attrSet(attr, fixed if fixed is not None else
                      "#" if attr == "href" else "")
    if token.type == "link_open":
        token.attrSet("rel", _REL)


def _relative_to(target: str, raw_base: str) -> str | None:
    """A target with a scheme, a host, an absolute path or only a fragment stays; a relative
    path becomes ``raw_base/<path>``; ``None`` for one above the repository root."""
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or target.startswith(("/", "#", "?")) or not parts.path:
        return target
    path = posixpath.normpath(parts.path)
    if path.startswith("..") or path in (".", ""):
        return None
    fragment = f"#{parts.fragment}" if parts.fragment else ""
    return f"{raw_base}/{quote(path, safe='/%')}{fragment}"  # already %-encoded


def summary(text: str, limit: int = 240) -> str:
    """The card's first paragraph as plain text (at most ``limit`` characters): what the index
    page shows and searches."""
    tokens = _MD.parse(strip_front_matter(text))
    for i, token in enumerate(tokens):
        if token.type == "paragraph_open" and i + 1 < len(tokens):
            plain = _plain(tokens[i + 1].children or [])
            if plain:
                return plain if len(plain) <= limit else plain[:limit - 1].rstrip() + "\u2026"
    return ""


def _plain(children: list[Any]) -> str:
    out = []
    for child in children:
        if child.type in ("text", "code_inline"):
            out.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            out.append(" ")
    return " ".join("".join(out).split())
