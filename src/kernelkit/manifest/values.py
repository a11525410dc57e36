"""Typed reads of raw TOML values that record a ``Problem`` instead of raising.

A ``Reader`` walks the ``dict`` that ``tomllib`` produced. Every getter takes the table, the
table's field path and a key; on a missing or ill-typed value it records a problem (with the
line found by ``LineIndex``) and returns ``None`` so reading can go on and report everything.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from datetime import date, datetime, time
from pathlib import Path
from typing import Any

from kernelkit.errors import Problem
from kernelkit.manifest.locate import LineIndex
from kernelkit.manifest.model import Version

GIT_SCHEMES: tuple[str, ...] = ("https", "http", "git", "ssh", "git+ssh", "git+https", "git+http")
# "8.0", "9.0a", "10.0f", "12.1+PTX"
CAPABILITY_RE = re.compile(r"^[0-9]+\.[0-9]+[af]?(\+PTX)?\Z")
_URL_RE = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://(?P<host>[^/\s?#]*)[^\s]*\Z")
_SCP_RE = re.compile(r"^(?:[^@\s/:]+@)?[A-Za-z0-9._-]+:(?!/)\S+\Z")


def type_name(value: Any) -> str:
    """How a TOML value's type is called in messages."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a float"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, (datetime, date, time)):
        return "a date/time"
    return type(value).__name__


def join(table: str, key: str) -> str:
    return f"{table}.{key}" if table else key


def git_url_error(url: str) -> str | None:
    """Why ``url`` is not a git URL upstream accepts, or ``None`` if it is fine."""
    match = _URL_RE.match(url)
    if match is not None:
        scheme = match.group("scheme").lower()
        if scheme not in GIT_SCHEMES:
            return (f"unsupported scheme `{scheme}` in git URL {url!r}; "
                    f"use one of: {', '.join(GIT_SCHEMES)}")
        if not match.group("host"):
            return f"git URL {url!r} has no host"
        return None
    if _SCP_RE.match(url):
        return None
    return (f"invalid git URL {url!r}; use e.g. \"https://github.com/org/repo\" "
            "or \"git@github.com:org/repo.git\"")


class Reader:
    """Collects problems while reading one manifest."""

    def __init__(self, file: Path | None, index: LineIndex | None) -> None:
        self.file = file
        self.index = index
        self.problems: list[Problem] = []

    def problem(self, field: str, message: str) -> None:
        line = self.index.line_of(field) if self.index is not None and field else None
        self.problems.append(Problem(self.file, line, field, message))

    def has_problem(self, field: str) -> bool:
        """Whether a problem was recorded for ``field`` or anything inside it."""
        return any(p.field == field or p.field.startswith((field + ".", field + "["))
                   for p in self.problems)

    # --- tables --------------------------------------------------------------------------

    def table(self, value: Any, field: str, allowed: Iterable[str]) -> dict[str, Any] | None:
        """The ``allowed`` keys of table ``value``; every other key is reported as a problem."""
        if not isinstance(value, dict):
            self.problem(field, f"expected a table, got {type_name(value)}")
            return None
        allowed = tuple(allowed)
        for key in value:
            if key not in allowed:
                self.unknown_key(field, key, allowed)
        return {k: v for k, v in value.items() if k in allowed}

    def unknown_key(self, field: str, key: str, allowed: tuple[str, ...]) -> None:
        where = f"[{field}]" if field else "the top level"
        message = f"unknown key `{key}` in {where}"
        close = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
        if close:
            message += f"; did you mean `{close[0]}`?"
        elif allowed:
            message += f"; allowed keys: {', '.join(sorted(allowed))}"
        self.problem(join(field, key), message)

    def present(self, tbl: dict[str, Any], field: str, key: str, required: bool) -> bool:
        if key in tbl:
            return True
        if required:
            self.problem(join(field, key), f"missing required key `{key}` in [{field}]")
        return False

    # --- scalars -------------------------------------------------------------------------

    def string(self, tbl: dict[str, Any], field: str, key: str,
               required: bool = False) -> str | None:
        if not self.present(tbl, field, key, required):
            return None
        value = tbl[key]
        if not isinstance(value, str):
            self.problem(join(field, key), f"expected a string, got {type_name(value)}")
            return None
        return value

    def integer(self, tbl: dict[str, Any], field: str, key: str,
                required: bool = False) -> int | None:
        """A non-negative integer."""
        if not self.present(tbl, field, key, required):
            return None
        value = tbl[key]
        if isinstance(value, bool) or not isinstance(value, int):
            self.problem(join(field, key), f"expected a non-negative integer "
                         f"(e.g. {key} = 1), got {type_name(value)}")
            return None
        if value < 0:
            self.problem(join(field, key), f"expected a non-negative integer, got {value}")
            return None
        return value

    def version(self, tbl: dict[str, Any], field: str, key: str) -> Version | None:
        if key not in tbl:
            return None
        return self.version_value(tbl[key], join(field, key))

    def version_value(self, value: Any, path: str) -> Version | None:
        if not isinstance(value, str):
            self.problem(path, f"expected a version string such as \"2.11\", got {type_name(value)}"
                         + (f" {value!r}; quote it" if isinstance(value, (int, float)) else ""))
            return None
        try:
            return Version.parse(value)
        except ValueError as exc:
            self.problem(path, str(exc))
            return None

    def git_url(self, tbl: dict[str, Any], field: str, key: str) -> str | None:
        url = self.string(tbl, field, key)
        if url is None:
            return None
        error = git_url_error(url)
        if error is not None:
            self.problem(join(field, key), error)
            return None
        return url

    # --- arrays --------------------------------------------------------------------------

    def strings(self, tbl: dict[str, Any], field: str, key: str,
                required: bool = False) -> tuple[str, ...] | None:
        """An array of strings; each non-string element is its own problem."""
        if not self.present(tbl, field, key, required):
            return None
        path = join(field, key)
        value = tbl[key]
        if not isinstance(value, list):
            self.problem(path, f"expected an array of strings, got {type_name(value)}")
            return None
        good: list[str] = []
        for i, item in enumerate(value):
            if isinstance(item, str):
                good.append(item)
            else:
                self.problem(f"{path}[{i}]", f"expected a string, got {type_name(item)}")
        return tuple(good)

    def choices(self, tbl: dict[str, Any], field: str, key: str, allowed: tuple[str, ...],
                what: str, required: bool = False) -> tuple[str, ...] | None:
        """An array of strings, each one of ``allowed``."""
        items = self.strings(tbl, field, key, required)
        if items is None:
            return None
        good = []
        for i, item in enumerate(tbl[key]):
            if not isinstance(item, str):
                continue
            if item in allowed:
                good.append(item)
            else:
                self.problem(f"{join(field, key)}[{i}]",
                             f"unknown {what} `{item}`; expected one of: {', '.join(allowed)}")
        return tuple(good)

    def capabilities(self, tbl: dict[str, Any], field: str, key: str) -> tuple[str, ...] | None:
        """CUDA capabilities such as "8.0", "9.0a", "10.0+PTX"."""
        items = self.strings(tbl, field, key)
        if items is None:
            return None
        for i, item in enumerate(tbl[key]):
            if isinstance(item, str) and not CAPABILITY_RE.match(item):
                self.problem(f"{join(field, key)}[{i}]",
                             f"invalid CUDA capability `{item}`; use the form \"8.0\", "
                             "\"9.0a\" or \"10.0+PTX\"")
        return items
