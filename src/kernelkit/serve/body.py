"""Reading request bodies: bounded in size, in time, and (for JSON) in nesting depth.

A client that sends headers and then trickles its body, or stops, holds a connection and a
handler; :func:`body_chunks` waits at most ``Limits.body_timeout`` seconds for each chunk and,
after that long, insists on an average of ``Limits.min_body_rate`` bytes per second, else the
request ends with 408 (and the connection is closed). The ASGI ``receive`` is wrapped only
while a body is read, never while a response streams. (The header timeout and the connection
cap live in :mod:`kernelkit.serve.guard`, below the application.)
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from starlette.requests import ClientDisconnect, Request

from kernelkit.errors import ServeApiError
from kernelkit.serve.config import Limits
from kernelkit.serve.fields import MAX_JSON_BYTES, json_object


async def body_chunks(request: Request, limits: Limits) -> AsyncIterator[bytes]:
    """The request body, chunk by chunk, within ``limits``."""
    start = time.monotonic()
    received = 0
    while True:
        try:
            message = await asyncio.wait_for(request.receive(), limits.body_timeout)
        except asyncio.TimeoutError:
            raise ServeApiError(408, f"no request body data for {limits.body_timeout:g} s"
                                ) from None
        if message["type"] == "http.disconnect":
            raise ClientDisconnect()
        chunk = message.get("body", b"")
        received += len(chunk)
        elapsed = time.monotonic() - start
        if elapsed > limits.body_timeout and received < limits.min_body_rate * elapsed:
            raise ServeApiError(408, f"the request body arrives slower than "
                                     f"{limits.min_body_rate:g} bytes/s")
        if chunk:
            yield chunk
        if not message.get("more_body", False):
            return


async def spool(request: Request, out: Path, limit: int, limits: Limits) -> None:
    """Stream the request body to ``out`` (never all in memory), at most ``limit`` bytes."""
    size = 0
    with open(out, "wb") as fh:
        async for chunk in body_chunks(request, limits):
            size += len(chunk)
            if size > limit:
                raise ServeApiError(413, f"the commit body is larger than {limit} bytes")
            fh.write(chunk)


async def json_body(request: Request, limits: Limits) -> dict[str, Any]:
    """A JSON object body (``{}`` when empty), checked by ``fields.json_object``."""
    raw = bytearray()
    async for chunk in body_chunks(request, limits):
        raw += chunk
        if len(raw) > MAX_JSON_BYTES:
            raise ServeApiError(413, f"the request body is larger than {MAX_JSON_BYTES} bytes")
    return json_object(bytes(raw)) if raw else {}
