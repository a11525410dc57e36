"""Credentials in URLs: the one redaction function, and the split that keeps them off argv.

A hub URL may carry a token (``git+https://user:TOKEN@host/kernels``). Anything kernelkit
shows (errors, ``-v`` logs, ``repr`` of a hub, JSON output, hub identities) passes through
:func:`redact_url`; the git backend passes :func:`split_credentials`'s clean URL to git and
hands the credentials over through the environment, never on a command line (where every user
of the machine can read them in ``/proc/<pid>/cmdline``).
"""

from __future__ import annotations

import re
from urllib.parse import unquote

#: ``scheme://userinfo@`` anywhere in a text (an error message may quote a URL)
_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<info>[^/?#@\s]*)@")
#: schemes whose user name alone may be a secret (``https://<token>@github.com/...``)
_TOKEN_USER_SCHEMES = ("http://", "https://")
REDACTED = "***"


def _redacted(match: re.Match[str]) -> str:
    scheme, info = match.group("scheme"), match.group("info")
    user, has_password, _ = info.partition(":")
    if has_password:
        return f"{scheme}{user}:{REDACTED}@"
    if scheme.lower().endswith(_TOKEN_USER_SCHEMES):
        return f"{scheme}{REDACTED}@"
    return match.group(0)  # ssh://git@host: a login name, not a secret


def redact_url(text: str) -> str:
    """``text`` with the secret part of every URL's user info replaced by ``***``: the
    password (``https://user:***@host``), and for http(s) a user name standing alone (often
    a token: ``https://***@host``). ssh user names (``ssh://git@host``) stay."""
    return _USERINFO.sub(_redacted, text)


def split_credentials(url: str) -> tuple[str, str | None, str | None]:
    """``(url without secrets, user, password)``. For http(s) the whole user info moves out
    of the URL; for other schemes only a password does (an ssh login name stays)."""
    match = _USERINFO.search(url)
    if match is None or match.start() != 0:
        return url, None, None
    scheme, info = match.group("scheme"), match.group("info")
    user, has_password, password = info.partition(":")
    rest = url[match.end():]
    if scheme.lower().endswith(_TOKEN_USER_SCHEMES):
        return scheme + rest, unquote(user) or None, unquote(password) if has_password else None
    if has_password:
        return f"{scheme}{user}@{rest}", None, unquote(password)
    return url, None, None
