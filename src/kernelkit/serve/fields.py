"""Every field of a request to ``kernelkit serve`` is checked here: one validator per kind.

A handler never calls ``int()``, ``json.loads`` or ``str()`` on what a client sent; it asks the
validator of the field's kind, which returns the checked value or raises
:class:`~kernelkit.errors.ServeApiError` with a 4xx status that names the field. So a request
can get an error, never a 500, and nothing a client sent reaches git, a file name or a response
header unchecked:

============================  ================================================================
kind                          validator
============================  ================================================================
integer (``cursor``)          :func:`integer`: ASCII digits only (``"¹".isdigit()`` is true),
                              bounded
flag (``recursive``, ...)     :func:`flag`: ``1``/``0``/``true``/``false``
revision (URL)                :func:`revision`: branch, tag, ``refs/heads/X``,
                              ``refs/tags/X``, ``refs/pr/N``, (short) commit id
ref to commit to              :func:`commit_ref`: a branch or ``refs/pr/N``
new branch / tag name         :func:`new_ref_name` (``hub.names.check_ref_name``: no ``HEAD``)
repository path               :func:`repo_path` (``hub.names.check_repo_path``, bounded)
plain string (JSON)           :func:`string`
text (commit summary, ...)    :func:`text`: UTF-8, no NUL or other control characters
JSON body / ndjson line       :func:`json_object`: bounded size and nesting depth
response header               :func:`header_value`: printable ASCII (a NUL or a newline in a
                              header would make the HTTP layer drop the connection)
============================  ================================================================
"""

from __future__ import annotations

import json
import re
from typing import Any

from kernelkit.errors import HubError, ServeApiError
from kernelkit.hub.names import check_ref_name, check_repo_path, is_hex_prefix, is_ref_name

PR_REF = re.compile(r"^refs/pr/([1-9][0-9]{0,8})\Z")
FULL_REF = re.compile(r"^refs/(heads|tags)/(.+)\Z", re.S)
_DIGITS = re.compile(r"^[0-9]{1,18}\Z")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_UNPRINTABLE = re.compile(r"[^\x20-\x7e]")

MAX_REVISION = 255  # characters of a revision in a URL
MAX_PATH = 4096  # characters of a repository path
MAX_TEXT = 65536  # characters of a commit summary or description
MAX_JSON_BYTES = 1 << 20  # a JSON request body (commit bodies are ndjson, streamed)
MAX_JSON_DEPTH = 32  # nesting of any JSON value a client sends (the API's are 3 deep)
MAX_HEADER = 1024  # characters of an error message in X-Error-Message


def shown(value: object, limit: int = 80) -> str:
    """A client's value as it appears in a message: ``repr``, cut to ``limit`` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "...'"


def bad(field: str, value: object, why: str, status: int = 400) -> ServeApiError:
    return ServeApiError(status, f"invalid {field} {shown(value)}: {why}")


def integer(text: str | None, field: str, *, default: int, maximum: int) -> int:
    """A non-negative integer query parameter written in ASCII digits, at most ``maximum``."""
    if text is None:
        return default
    if not _DIGITS.match(text) or int(text) > maximum:
        raise bad(field, text, f"expected a whole number from 0 to {maximum}")
    return int(text)


def flag(text: str | None, field: str) -> bool:
    """A boolean query parameter: ``1``/``true`` or ``0``/``false`` (any case); absent: false."""
    if text is None or text == "":
        return False
    if text.lower() in ("1", "true"):
        return True
    if text.lower() in ("0", "false"):
        return False
    raise bad(field, text, "expected 1, 0, true or false")


def revision(text: str, repo_id: str) -> str:
    """A revision as clients send it: a branch or tag name, ``refs/heads/<branch>``,
    ``refs/tags/<tag>``, ``refs/pr/<n>`` or a (short) commit id. Anything else is a revision
    that cannot exist: 404 ``RevisionNotFound``, as the Hub answers."""
    full = FULL_REF.match(text)
    ok = len(text) <= MAX_REVISION and bool(
        PR_REF.match(text) or (full and is_ref_name(full.group(2)))
        or (not text.startswith("refs/") and (is_ref_name(text) or is_hex_prefix(text))))
    if not ok:
        raise ServeApiError(404, f"Revision {shown(text)} not found in {repo_id}",
                            "RevisionNotFound")
    return text


def split_revision(rest: list[str]) -> tuple[str, list[str]]:
    """The revision segment of a URL and what follows it. Clients quote a revision into one
    segment (``refs%2Fheads%2Fv1``); an unquoted ``refs/heads/v1`` or ``refs/pr/1`` (three
    segments) is accepted too."""
    if len(rest) >= 3 and rest[0] == "refs":
        return "/".join(rest[:3]), rest[3:]
    return rest[0], rest[1:]


def commit_ref(text: str) -> str:
    """The ref a commit to ``text`` (a checked :func:`revision`) moves: ``refs/heads/<b>`` for a
    branch (short or full) or ``refs/pr/<n>``; a tag or a commit id cannot be committed to."""
    full = FULL_REF.match(text)
    if PR_REF.match(text) or (full and full.group(1) == "heads"):
        return text
    if not full and is_ref_name(text) and not is_hex_prefix(text):
        return f"refs/heads/{text}"
    raise bad("revision", text, "commits go to a branch or a pull-request ref (refs/pr/N)")


def new_ref_name(value: object, what: str) -> str:
    """The name of a branch or tag to create (the hub's rule: ``hub.names.check_ref_name``)."""
    if not isinstance(value, str):
        raise bad(what, value, f"a {what} name must be a string")
    try:
        return check_ref_name(value, what)
    except HubError as exc:
        raise ServeApiError(400, exc.message) from None


def repo_path(text: str, *, status: int = 404) -> str:
    """A path inside a repository (``hub.names.check_repo_path``). Reads answer 404
    ``EntryNotFound`` (no such file can exist); writes pass ``status=400``."""
    try:
        if len(text) > MAX_PATH:
            raise HubError("too long")
        return check_repo_path(text)
    except HubError:
        code = "EntryNotFound" if status == 404 else None
        raise ServeApiError(status, f"invalid path {shown(text)} in the repository",
                            code) from None


def string(body: dict[str, Any], key: str, *, required: bool = True,
           max_len: int = MAX_REVISION) -> str | None:
    """A plain string field of a JSON body (``organization``, ``startingPoint``, ...)."""
    value = body.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value or len(value) > max_len:
        raise bad(f"field {key!r}", value, "expected a non-empty string"
                  + (" (required)" if value is None else ""))
    return value


def text(value: object, field: str, *, max_len: int = MAX_TEXT) -> str:
    """Free text (a commit summary or description): a UTF-8 string without NUL or other
    control characters (tab, newline and carriage return are fine), at most ``max_len``."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise bad(field, value, "expected a string")
    if len(value) > max_len:
        raise bad(field, value, f"longer than {max_len} characters")
    found = _CONTROL.search(value)
    if found:
        raise bad(field, value, f"contains the control character {found.group()!r}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise bad(field, value, "is not valid Unicode (a lone surrogate)") from None
    return value


def json_object(raw: bytes, what: str = "the request body") -> dict[str, Any]:
    """``raw`` parsed as a JSON object, after checking its size and nesting depth (a 100k-deep
    array would exhaust Python's recursion limit inside the parser)."""
    if len(raw) > MAX_JSON_BYTES:
        raise ServeApiError(413, f"{what} is larger than {MAX_JSON_BYTES} bytes")
    if json_depth(raw) > MAX_JSON_DEPTH:
        raise ServeApiError(400, f"{what} nests JSON deeper than {MAX_JSON_DEPTH} levels")
    try:
        data = json.loads(raw)
    except ValueError:
        raise ServeApiError(400, f"{what} is not JSON") from None
    if not isinstance(data, dict):
        raise ServeApiError(400, f"{what} must be a JSON object")
    return data


def json_depth(raw: bytes) -> int:
    """How deep arrays and objects nest in ``raw`` (brackets inside strings do not count);
    stops counting past ``MAX_JSON_DEPTH``. Linear in ``len(raw)``, whatever the input."""
    plain = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    outside = b"".join(plain.split(b'"')[::2])  # the parts between strings
    depth = deepest = 0
    for byte in outside.translate(None, _NOT_BRACKETS):
        depth += 1 if byte in b"[{" else -1
        if depth > deepest:
            deepest = depth
            if deepest > MAX_JSON_DEPTH:
                break
    return deepest


_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


def header_value(message: str) -> str:
    """``message`` as a response header value: printable ASCII only (every other character
    written as ``\\xNN``/``\\uNNNN``), at most ``MAX_HEADER`` characters."""
    safe = _UNPRINTABLE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"),
                            message)
    return safe[:MAX_HEADER]
