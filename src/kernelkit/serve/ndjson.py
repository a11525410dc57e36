"""Read the body of a Hub ``/commit`` request without holding a file's content in memory.

The body is newline-delimited JSON (``application/x-ndjson``): a ``header`` line, then one line
per operation. ``huggingface_hub`` sends a regular file as
``{"key": "file", "value": {"content": "<base64>", "path": ..., "encoding": "base64"}}``, so one
line is as large as the file. Lines up to ``SMALL`` bytes are parsed with :mod:`json`; a longer
line is scanned for its ``"content": "`` string, which is base64-decoded in chunks straight into
a temporary file (base64 has no quotes or escapes), and the rest of the line is parsed as JSON
with an empty ``content``.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from kernelkit.errors import CommitBodyError
from kernelkit.serve.fields import MAX_JSON_DEPTH, json_depth

SMALL = 1 << 16
_CHUNK = 1 << 20
_CONTENT = b'"content": "'


@dataclass
class CommitRequest:
    header: dict[str, Any] = field(default_factory=dict)
    files: dict[str, Path] = field(default_factory=dict)  # repo path -> local temporary file
    deleted_files: set[str] = field(default_factory=set)
    deleted_dirs: set[str] = field(default_factory=set)
    lfs: list[str] = field(default_factory=list)  # paths sent as LFS pointers (not supported)


def read_commit(body: IO[bytes], scratch: Path) -> CommitRequest:
    """Parse a commit body from ``body``; file contents go to files under ``scratch``."""
    req = CommitRequest()
    n = 0
    while True:
        head = body.readline(SMALL)
        if not head:
            break
        if head.endswith(b"\n") or len(head) < SMALL:
            if head.strip():
                _apply(req, _loads(head), None, scratch)
            continue
        n += 1
        item, content = _read_long_line(head, body, scratch / f"file-{n}")
        _apply(req, item, content, scratch)
    if not req.header:
        raise CommitBodyError("the commit body has no header line")
    return req


def _loads(line: bytes) -> dict[str, Any]:
    if json_depth(line) > MAX_JSON_DEPTH:
        raise CommitBodyError(f"a line of the commit body nests JSON deeper than "
                              f"{MAX_JSON_DEPTH} levels")
    try:
        item = json.loads(line)
    except ValueError as exc:
        raise CommitBodyError(f"a line of the commit body is not JSON ({exc})") from None
    if not isinstance(item, dict) or not isinstance(item.get("value"), dict):
        raise CommitBodyError("each line of the commit body must be {key, value}")
    return item


def _apply(req: CommitRequest, item: dict[str, Any], content: Path | None,
           scratch: Path) -> None:
    key, value = item.get("key"), item["value"]
    path = value.get("path")
    if key == "header":
        req.header = value
    elif key == "file" and isinstance(path, str):
        if content is None:
            content = _small_content(value, scratch / f"small-{len(req.files)}")
        req.files[path] = content
    elif key == "deletedFile" and isinstance(path, str):
        req.deleted_files.add(path)
    elif key == "deletedFolder" and isinstance(path, str):
        req.deleted_dirs.add(path.strip("/"))
    elif key == "lfsFile" and isinstance(path, str):
        req.lfs.append(path)
    else:
        raise CommitBodyError(f"unsupported commit operation {key!r}")


def _small_content(value: dict[str, Any], out: Path) -> Path:
    raw = value.get("content")
    if not isinstance(raw, str) or value.get("encoding", "base64") != "base64":
        raise CommitBodyError(f"file {value.get('path')!r}: content must be base64")
    try:
        data = base64.b64decode(raw, validate=True)
    except binascii.Error:
        raise CommitBodyError(f"file {value.get('path')!r}: invalid base64") from None
    out.write_bytes(data)
    return out


def _read_long_line(head: bytes, body: IO[bytes], out: Path) -> tuple[dict[str, Any], Path]:
    start = head.find(_CONTENT)
    if start < 0:
        raise CommitBodyError("a long commit line carries no \"content\" string")
    prefix = head[:start]
    pending = head[start + len(_CONTENT):]
    carry = b""
    with open(out, "wb") as fh:
        while True:
            end = pending.find(b'"')
            data = carry + (pending if end < 0 else pending[:end])
            cut = len(data) - len(data) % 4 if end < 0 else len(data)
            fh.write(_b64(data[:cut]))
            carry = data[cut:]
            if end >= 0:
                rest = pending[end + 1:]
                break
            pending = body.readline(_CHUNK)  # never past the end of this line
            if not pending:
                raise CommitBodyError("the commit body ended inside a file's content")
    tail = rest if rest.endswith(b"\n") else rest + body.readline(SMALL)
    item = _loads(prefix + b'"content": ""' + tail)
    return item, out


def _b64(data: bytes) -> bytes:
    try:
        return base64.b64decode(data, validate=True)
    except binascii.Error:
        raise CommitBodyError("a file's content is not valid base64") from None
