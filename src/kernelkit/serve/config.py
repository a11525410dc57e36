"""What ``kernelkit serve`` is configured with, and who may do what (tokens).

Tokens are opaque strings sent as ``Authorization: Bearer <token>`` (what ``huggingface_hub``
sends for ``HF_TOKEN``). Write tokens may read and write; read tokens may only read. Reads are
anonymous unless ``read_requires_token``; private repositories always need a token. Any token
that is presented but unknown is refused (401), even where no token is needed.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

from kernelkit.errors import KernelkitError


class Access(Enum):
    ANONYMOUS = "anonymous"
    READ = "read"
    WRITE = "write"
    INVALID = "invalid"


@dataclass(frozen=True)
class Limits:
    """What one client may hold: the defences against slow and many clients (docs/serve.md,
    "Limits"; ``serve/guard.py``, ``serve/body.py``)."""

    header_timeout: float = 10.0  # seconds from connecting (or the last response) to a
    #                               request's complete headers
    body_timeout: float = 30.0  # seconds without a byte of a request body
    min_body_rate: float = 1024.0  # bytes/s on average once ``body_timeout`` has passed
    max_connections: int | None = None  # open connections (4096), within the fd limit
    log_lines_per_second: float = 20.0  # per kind of log message (access lines: 10x that)
    backlog: int = 128  # connections the kernel queues before they are accepted


@dataclass(frozen=True)
class ServeConfig:
    hub_dir: Path
    write_tokens: tuple[str, ...] = ()
    read_tokens: tuple[str, ...] = ()
    read_requires_token: bool = False
    trusted_publishers: tuple[str, ...] = ()  # orgs reported as trustedKernelPublisher; "*": all
    page_size: int = 1000  # tree listing entries per page (the Hub's own page size)
    ref_ttl: float = 1.0  # seconds a resolved branch/tag may be answered from memory
    max_commit_bytes: int = 16 << 30
    blob_dir: Path | None = None
    limits: Limits = field(default_factory=Limits)
    pages: bool = True  # the web pages (serve/pages.py) beside the API

    def access(self, authorization: str | None) -> Access:
        """Classify the request's ``Authorization`` header (constant-time comparisons)."""
        if not authorization:
            return Access.ANONYMOUS
        scheme, _, token = authorization.partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            return Access.INVALID
        if _known(token, self.write_tokens):
            return Access.WRITE
        if _known(token, self.read_tokens):
            return Access.READ
        return Access.INVALID

    def is_trusted(self, org: str) -> bool:
        return "*" in self.trusted_publishers or org in self.trusted_publishers


def _known(token: str, tokens: tuple[str, ...]) -> bool:
    found = False
    for t in tokens:  # no early exit: the time taken does not tell which token nearly matched
        found |= hmac.compare_digest(token.encode(), t.encode())
    return found


def read_token_file(path: Path) -> tuple[str, ...]:
    """Tokens from a file, one per line; blank lines and ``#`` comments are skipped."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise KernelkitError(f"{path}: cannot read the token file ({exc.strerror})",
                             hint="pass an existing file with one token per line") from None
    tokens = tuple(line.strip() for line in text.splitlines()
                   if line.strip() and not line.lstrip().startswith("#"))
    if not tokens:
        raise KernelkitError(f"{path}: the token file holds no token",
                             hint="write one token per line (e.g. from `openssl rand -hex 32`)")
    bad = [i for i, t in enumerate(tokens) if " " in t or len(t) < 8]
    if bad:
        raise KernelkitError(f"{path}: token {bad[0] + 1} is shorter than 8 characters or "
                             "contains a space", hint="use long random tokens")
    return tokens
