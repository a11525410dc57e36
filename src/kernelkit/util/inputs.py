"""User input files: one bounded reader, and one parser per format (TOML, JSON).

Every file that a user or a hub hands kernelkit (``build.toml``, ``pyproject.toml``,
``kernels.lock``, ``metadata.json``, ``kernel-status.toml``) is read with :func:`read_input`:
regular files only (a FIFO, a device such as ``/dev/zero`` or a directory is refused at once,
without blocking on it) and at most ``limit`` bytes, so a hostile file can neither hang a
command nor exhaust memory. :func:`parse_toml` and :func:`parse_json` are the only places
where such a file's text is parsed: every way the standard parsers fail (a syntax error, a
number longer than Python's int-string limit, nesting deeper than the recursion limit, invalid
UTF-8) becomes one :class:`~kernelkit.errors.InputFileError` naming the file and, where known,
the line. A format's reader re-raises it as its own error (``ManifestError``, ``LockError``).
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from pathlib import Path
from typing import Any

from kernelkit.errors import InputFileError

#: build.toml, pyproject.toml, kernel-status.toml: real ones are a few kilobytes.
MAX_TOML_BYTES = 1 << 20
#: metadata.json (one digest line per file of a variant) and kernels.lock.
MAX_JSON_BYTES = 64 << 20
#: other text a project hands over as it is (the model card, CARD.md).
MAX_TEXT_BYTES = 16 << 20
_CHUNK = 1 << 16
# A run of digits longer than Python's int-string limit (sys.get_int_max_str_digits, 4300 by
# default): json and tomllib raise a bare ValueError on it.
_LONG_NUMBER = re.compile(r"[0-9][0-9_]{4299,}")


def read_input(path: Path, limit: int) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them.

    ``FileNotFoundError`` (and ``NotADirectoryError``) propagate, so callers can say what to
    create; everything else (a FIFO, a device, a directory, a larger file, no permission) is
    an ``InputFileError`` naming the file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        raise
    except OSError as exc:
        raise InputFileError(path, f"cannot read it ({exc.strerror or exc})") from None
    try:
        return _read_regular(fd, path, limit)
    finally:
        os.close(fd)


def _read_regular(fd: int, path: Path, limit: int) -> bytes:
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        kind = ("a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
                else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket"
                if stat.S_ISSOCK(mode) else "not a regular file")
        raise InputFileError(path, f"is {kind}, not a regular file",
                             hint="point kernelkit at the file itself")
    os.set_blocking(fd, True)
    chunks: list[bytes] = []
    size = 0
    while chunk := _read_chunk(fd, path):
        size += len(chunk)
        if size > limit:  # also catches a file that grows while it is read
            raise InputFileError(path, f"is larger than {limit} bytes, far more than such a "
                                 "file needs", hint="is this the right file?")
        chunks.append(chunk)
    return b"".join(chunks)


def _read_chunk(fd: int, path: Path) -> bytes:
    try:
        return os.read(fd, _CHUNK)
    except OSError as exc:
        raise InputFileError(path, f"cannot read it ({exc.strerror or exc})") from None


def read_input_text(path: Path, limit: int) -> str:
    """:func:`read_input` decoded as UTF-8 (anything else is an ``InputFileError``)."""
    return decode_text(read_input(path, limit), path)


def decode_text(raw: bytes, source: Path | str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputFileError(source, f"is not UTF-8 text (byte {exc.start})") from None


def parse_toml(text: str, source: Path | str) -> dict[str, Any]:
    """The table of TOML ``text``; every parse failure is an ``InputFileError``."""
    if sys.version_info >= (3, 11):  # imported here: a warm kernel load parses no TOML
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib

    try:
        data: dict[str, Any] = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line = getattr(exc, "lineno", None)
        if line is None:
            match = re.search(r"line (\d+)", str(exc))
            line = int(match.group(1)) if match else None
        message = getattr(exc, "msg", None) or re.sub(r"\s*\(at [^)]*\)$", "", str(exc))
        raise InputFileError(source, f"TOML syntax error: {message}", line=line) from None
    except RecursionError:
        raise InputFileError(source, "tables or arrays are nested too deeply") from None
    except ValueError as exc:  # tomllib's int() of a number beyond the digit limit
        raise _number_error(source, text, exc) from None
    return data


def parse_json(raw: bytes | str, source: Path | str) -> Any:
    """The value of JSON ``raw``; every parse failure is an ``InputFileError``."""
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InputFileError(source, f"not valid JSON: {exc.msg}", line=exc.lineno) from None
    except UnicodeDecodeError:
        raise InputFileError(source, "not valid JSON: not UTF-8 text") from None
    except RecursionError:
        raise InputFileError(source, "not valid JSON: nested too deeply") from None
    except ValueError as exc:  # json's int() of a number beyond the digit limit
        text = raw if isinstance(raw, str) else raw.decode("utf-8", "replace")
        raise _number_error(source, text, exc) from None


def _number_error(source: Path | str, text: str, exc: ValueError) -> InputFileError:
    match = _LONG_NUMBER.search(text)
    if match is None:  # not the digit limit after all: say what the parser said
        return InputFileError(source, f"a value that cannot be read ({exc})")
    return InputFileError(
        source, f"a {len(match.group().replace('_', ''))}-digit number: numbers longer than "
        f"{_digit_limit()} digits are not read",
        line=text.count("\n", 0, match.start()) + 1,
        hint="no field of this file needs such a number; fix the value")


def _digit_limit() -> int:
    limit: int = getattr(sys, "get_int_max_str_digits", lambda: 4300)()
    return limit
