"""The streaming reader of Hub commit bodies (``kernelkit.serve.ndjson``)."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import pytest

from kernelkit.errors import CommitBodyError
from kernelkit.serve import ndjson
from kernelkit.serve.config import Access, ServeConfig, read_token_file
from kernelkit.serve.ndjson import read_commit


def body(*items: dict[str, object]) -> io.BufferedReader:
    raw = b"".join(json.dumps(i).encode() + b"\n" for i in items)
    return io.BufferedReader(io.BytesIO(raw))  # type: ignore[arg-type]


def add(path: str, data: bytes) -> dict[str, object]:
    return {"key": "file", "value": {"content": base64.b64encode(data).decode(), "path": path,
                                     "encoding": "base64"}}


HEADER = {"key": "header", "value": {"summary": "s", "parentCommit": "a" * 40}}


@pytest.mark.parametrize("size", [0, 1, 5, ndjson.SMALL - 1, ndjson.SMALL * 3 + 7,
                                  (1 << 20) * 2 + 3])
def test_files_of_every_size_round_trip(tmp_path: Path, size: int) -> None:
    data = bytes(range(256)) * (size // 256) + bytes(range(size % 256))
    req = read_commit(body(HEADER, add("a/b.bin", data), add("c", b"x"),
                           {"key": "deletedFile", "value": {"path": "old"}},
                           {"key": "deletedFolder", "value": {"path": "build/x/"}}), tmp_path)
    assert req.header["parentCommit"] == "a" * 40
    assert req.files["a/b.bin"].read_bytes() == data and req.files["c"].read_bytes() == b"x"
    assert req.deleted_files == {"old"} and req.deleted_dirs == {"build/x"}


def test_bad_bodies_are_refused(tmp_path: Path) -> None:
    with pytest.raises(CommitBodyError, match="no header"):
        read_commit(body(add("a", b"x")), tmp_path)
    with pytest.raises(CommitBodyError, match="not JSON"):
        read_commit(io.BufferedReader(io.BytesIO(b"{nope\n")), tmp_path)  # type: ignore[arg-type]
    bad = add("a", b"x" * ndjson.SMALL)
    bad["value"]["content"] = "!!!!" * ndjson.SMALL  # type: ignore[index]
    with pytest.raises(CommitBodyError, match="base64"):
        read_commit(body(HEADER, bad), tmp_path)
    truncated = json.dumps(add("a", b"y" * ndjson.SMALL * 2)).encode()[: ndjson.SMALL + 10]
    with pytest.raises(CommitBodyError, match="ended inside"):
        read_commit(io.BufferedReader(io.BytesIO(truncated)), tmp_path)  # type: ignore[arg-type]
    with pytest.raises(CommitBodyError, match="unsupported"):
        read_commit(body(HEADER, {"key": "copy", "value": {"path": "a"}}), tmp_path)


def test_tokens(tmp_path: Path) -> None:
    cfg = ServeConfig(tmp_path, write_tokens=("w" * 10,), read_tokens=("r" * 10,))
    assert cfg.access(None) is Access.ANONYMOUS
    assert cfg.access(f"Bearer {'w' * 10}") is Access.WRITE
    assert cfg.access(f"bearer {'r' * 10}") is Access.READ
    assert cfg.access("Bearer nope") is Access.INVALID
    assert cfg.access(f"Basic {'w' * 10}") is Access.INVALID
    f = tmp_path / "tokens"
    f.write_text("# comment\n\nabcdefgh123\n")
    assert read_token_file(f) == ("abcdefgh123",)
    f.write_text("short\n")
    with pytest.raises(Exception, match="token 1 is shorter"):
        read_token_file(f)
