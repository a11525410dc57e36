"""Defences below the application: a header timeout, a connection cap, log rate limiting.

uvicorn has no timeout for a request's headers and no cap on open connections (its
``limit_concurrency`` answers 503 only once headers arrive, and counts the idle connections of
an attacker against everyone). A client that opens thousands of connections and sends half a
request on each would hold one file descriptor per connection until the process runs out.
:func:`guarded_protocol` returns uvicorn's HTTP/1.1 protocol with two rules added:

* **header timeout**: a connection must complete a request's headers within
  ``Limits.header_timeout`` seconds of connecting (or of its previous response); else it gets
  ``408`` and is closed;
* **connection cap**: past ``max_connections`` open connections, each new one closes the
  connection that has waited longest *for its headers* among those that had their chance (sent
  an incomplete request, or nothing for a second); if there is none, the new connection is
  closed once twice the cap is open. A client that sends its request at
  once leaves the waiting list on its first read, so it is served while an attacker's
  half-sent requests are cycled out.

:class:`RateLimit` is a logging filter: each kind of message (logger and format string) may be
logged ``rate`` times per second (bursts up to ten times that); what it drops is counted and
reported on the next line that passes, so an attack cannot grow the log without bound.
"""

from __future__ import annotations

import asyncio
import logging
import resource
import threading
import time
from collections import OrderedDict
from typing import Any

from kernelkit.serve.config import Limits

log = logging.getLogger("kernelkit.serve")

_TIMEOUT_RESPONSE = (b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain\r\n"
                     b"content-length: 31\r\nconnection: close\r\n\r\n"
                     b"request headers took too long\r\n")


def raise_fd_limit() -> int:
    """Raise the soft limit on open files to the hard limit; return the soft limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
        except (ValueError, OSError):
            pass
    return soft if soft != resource.RLIM_INFINITY else 1 << 20


def connection_budget(limits: Limits, fd_limit: int) -> tuple[int, int]:
    """``(cap, backlog)`` that fit in ``fd_limit`` descriptors. Up to twice the cap may be open
    for a moment (connections not read yet are spared eviction), and about three accept bursts
    of ``backlog`` sockets each are accepted before any of them is counted (asyncio accepts a
    burst per wake-up, and counts a connection two loop turns later); a quarter of the limit,
    at most 256, stays for git processes, blob files and the listening socket."""
    backlog = max(8, min(limits.backlog, fd_limit // 8))
    reserve = min(256, fd_limit // 4)
    room = max(8, (fd_limit - 3 * backlog - reserve) // 2)
    return max(1, min(limits.max_connections or 4096, room)), backlog


class Guard:
    """The connections of one server: how many are open, which wait for request headers."""

    def __init__(self, limits: Limits, cap: int) -> None:
        self.limits, self.cap = limits, cap
        self.grace = min(1.0, limits.header_timeout)
        self.open: set[Any] = set()
        #: connections waiting for a request's headers, oldest first: (timer, since, read)
        self.waiting: OrderedDict[Any, tuple[asyncio.TimerHandle, float, bool]] = OrderedDict()
        self.evicted = 0

    def opened(self, conn: Any) -> None:
        self.open.add(conn)
        self.wait(conn)
        if len(self.open) > self.cap:
            victim = self._victim()
            if victim is None and len(self.open) > 2 * self.cap:
                victim = conn  # every other connection is inside a request or just arrived
            if victim is not None:
                self.evicted += 1
                self._close(victim, timed_out=True)

    def _victim(self) -> Any:
        """The connection that has waited longest for its headers and has had its chance: it
        sent data that did not complete them, or nothing for ``grace`` seconds. A connection
        not read yet is spared (a burst of accepts runs before any data is read, and a normal
        client's request is in its first read)."""
        now = time.monotonic()
        for conn, (_timer, since, read) in self.waiting.items():
            if read or now - since > self.grace:
                return conn
        return None

    def wait(self, conn: Any) -> None:
        """``conn`` now waits for a request's headers (after connecting or a response)."""
        self.started(conn)
        loop = asyncio.get_running_loop()
        timer = loop.call_later(self.limits.header_timeout, self._expire, conn)
        self.waiting[conn] = (timer, time.monotonic(), False)

    def read(self, conn: Any) -> None:
        """``conn`` sent data that did not complete a request's headers."""
        entry = self.waiting.get(conn)
        if entry is not None and not entry[2]:
            self.waiting[conn] = (entry[0], entry[1], True)

    def started(self, conn: Any) -> None:
        entry = self.waiting.pop(conn, None)
        if entry is not None:
            entry[0].cancel()

    def closed(self, conn: Any) -> None:
        self.started(conn)
        self.open.discard(conn)

    def _expire(self, conn: Any) -> None:
        if conn in self.waiting:
            log.debug("closed a connection that sent no complete request for %g s",
                      self.limits.header_timeout)
            self._close(conn, timed_out=True)

    def _close(self, conn: Any, *, timed_out: bool) -> None:
        self.closed(conn)  # counted out now: its descriptor is released as the transport closes
        transport = conn.transport
        if transport is not None and not transport.is_closing():
            if timed_out:
                transport.write(_TIMEOUT_RESPONSE)
            transport.close()


def guarded_protocol(limits: Limits, cap: int) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol class with :class:`Guard`'s rules, for one server."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    guard = Guard(limits, cap)

    class GuardedH11Protocol(H11Protocol):
        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            guard.opened(self)

        def data_received(self, data: bytes) -> None:
            before = self.cycle
            super().data_received(data)
            if self.cycle is not before:  # a request's headers are complete
                guard.started(self)
            else:
                guard.read(self)

        def on_response_complete(self) -> None:
            done = self.cycle
            super().on_response_complete()
            if self.cycle is done and not self.transport.is_closing():
                guard.wait(self)  # keep-alive: the next request's headers are due in time

        def connection_lost(self, exc: Exception | None) -> None:
            guard.closed(self)
            super().connection_lost(exc)

    GuardedH11Protocol.guard = guard  # type: ignore[attr-defined]  # for tests
    return GuardedH11Protocol


class RateLimit(logging.Filter):
    """At most ``rate`` records per second per (logger, format string), bursts of
    ``10 * rate``; a passing record after drops says how many were dropped."""

    def __init__(self, rate: float = 20.0) -> None:
        super().__init__()
        self.rate, self.burst = rate, 10 * rate
        self._buckets: dict[tuple[str, str], tuple[float, float, int]] = {}
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        key = (record.name, str(record.msg))
        now = time.monotonic()
        with self._lock:
            if len(self._buckets) > 10_000:
                self._buckets.clear()
            tokens, last, dropped = self._buckets.get(key, (self.burst, now, 0))
            tokens = min(self.burst, tokens + (now - last) * self.rate)
            if tokens < 1:
                self._buckets[key] = (tokens, now, dropped + 1)
                return False
            self._buckets[key] = (tokens - 1, now, 0)
        if dropped:
            record.msg = f"{record.msg} [{dropped} similar messages suppressed]"
        return True
