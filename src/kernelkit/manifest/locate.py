"""Map a field path (``kernel.relu.src[1]``) to its line in a TOML text.

``tomllib`` gives values but no positions, so this module scans the text once and records the
line of every table header, key and array element it meets. It only ever runs on text that
``tomllib`` has already accepted, and it never raises: a construct it does not understand ends
the scan, and fields it did not reach fall back to their closest recorded parent.

Paths join keys with ``.`` and write array indices as ``[i]``; the ``n``-th ``[[a.b]]`` header
is ``a.b[n]``.
"""

from __future__ import annotations

import bisect
import contextlib
import re

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_SCALAR_END = re.compile(r"[,\]}\n#]")


class LineIndex:
    """Line numbers (1-based) of the fields of one TOML text."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._newlines = [i for i, ch in enumerate(text) if ch == "\n"]
        self._lines: dict[str, int] = {}
        self._aot_counts: dict[str, int] = {}
        with contextlib.suppress(IndexError, ValueError):  # keep what was recorded so far
            self._scan()

    def line_of(self, field: str) -> int | None:
        """The line of ``field``, else of its nearest recorded parent, else ``None``."""
        path = field
        while path:
            if path in self._lines:
                return self._lines[path]
            path = _parent(path)
        return None

    def exact_line_of(self, field: str) -> int | None:
        return self._lines.get(field)

    # --- scanning ------------------------------------------------------------------------

    def _line_at(self, pos: int) -> int:
        return bisect.bisect_left(self._newlines, pos) + 1

    def _record(self, path: str, pos: int) -> None:
        self._lines.setdefault(path, self._line_at(pos))

    def _scan(self) -> None:
        pos, table = 0, ""
        while True:
            pos = self._skip_blank(pos, newlines=True)
            if pos >= len(self._text):
                return
            if self._text.startswith("[[", pos):
                keys, pos = self._read_key(pos + 2)
                pos = self._text.index("]]", pos) + 2
                base = ".".join(keys)
                index = self._aot_counts.get(base, 0)
                self._aot_counts[base] = index + 1
                self._record(base, pos)
                table = f"{base}[{index}]"
                self._record(table, pos)
            elif self._text[pos] == "[":
                start = pos
                keys, pos = self._read_key(pos + 1)
                pos = self._text.index("]", pos) + 1
                table = ".".join(keys)
                self._record(table, start)
            else:
                pos = self._key_value(pos, table)

    def _key_value(self, pos: int, table: str) -> int:
        start = pos
        keys, pos = self._read_key(pos)
        path = _join(table, ".".join(keys))
        self._record(path, start)
        pos = self._skip_blank(pos)
        if self._text[pos] != "=":
            raise ValueError("expected '='")
        pos = self._skip_blank(pos + 1)
        return self._value(pos, path)

    def _read_key(self, pos: int) -> tuple[list[str], int]:
        keys: list[str] = []
        while True:
            pos = self._skip_blank(pos)
            ch = self._text[pos]
            if ch in "\"'":
                end = self._string_end(pos)
                keys.append(_key_text(self._text[pos:end]))
                pos = end
            else:
                match = _BARE_KEY.match(self._text, pos)
                if match is None:
                    raise ValueError("expected a key")
                keys.append(match.group())
                pos = match.end()
            pos = self._skip_blank(pos)
            if self._text[pos] != ".":
                return keys, pos
            pos += 1

    def _value(self, pos: int, path: str) -> int:
        ch = self._text[pos]
        if ch in "\"'":
            return self._string_end(pos)
        if ch == "[":
            return self._array(pos + 1, path)
        if ch == "{":
            return self._inline_table(pos + 1, path)
        match = _SCALAR_END.search(self._text, pos)
        return match.start() if match else len(self._text)

    def _array(self, pos: int, path: str) -> int:
        index = 0
        while True:
            pos = self._skip_blank(pos, newlines=True)
            if self._text[pos] == "]":
                return pos + 1
            item = f"{path}[{index}]"
            self._record(item, pos)
            pos = self._skip_blank(self._value(pos, item), newlines=True)
            index += 1
            if self._text[pos] == ",":
                pos += 1

    def _inline_table(self, pos: int, path: str) -> int:
        while True:
            pos = self._skip_blank(pos, newlines=True)
            if self._text[pos] == "}":
                return pos + 1
            pos = self._skip_blank(self._key_value(pos, path), newlines=True)
            if self._text[pos] == ",":
                pos += 1

    def _string_end(self, pos: int) -> int:
        """Position just past the string that starts at ``pos``."""
        text = self._text
        quote = text[pos]
        if text.startswith(quote * 3, pos):
            end = pos + 3
            while True:
                end = text.index(quote * 3, end)
                if quote == '"' and _escaped(text, end):
                    end += 1
                    continue
                # a closing delimiter may be followed by up to two more quotes
                while text.startswith(quote, end + 3):
                    end += 1
                return end + 3
        end = pos + 1
        while text[end] != quote:
            end += 2 if quote == '"' and text[end] == "\\" else 1
        return end + 1

    def _skip_blank(self, pos: int, *, newlines: bool = False) -> int:
        text = self._text
        blank = " \t\r\n" if newlines else " \t"
        while pos < len(text):
            if text[pos] in blank:
                pos += 1
            elif text[pos] == "#":
                end = text.find("\n", pos)
                pos = len(text) if end < 0 else end
            else:
                break
        return pos


def _escaped(text: str, pos: int) -> bool:
    """Whether the character at ``pos`` is preceded by an odd number of backslashes."""
    count = 0
    while pos - count - 1 >= 0 and text[pos - count - 1] == "\\":
        count += 1
    return count % 2 == 1


def _join(table: str, key: str) -> str:
    return f"{table}.{key}" if table else key


def _parent(path: str) -> str:
    """``a.b[2]`` -> ``a.b``; ``a.b`` -> ``a``; ``a`` -> ``""``."""
    if path.endswith("]"):
        return path[: path.rindex("[")]
    dot = path.rfind(".")
    return path[:dot] if dot >= 0 else ""


def _key_text(quoted: str) -> str:
    """The key a quoted TOML key stands for (escapes of a basic string decoded, as tomllib
    does), so a problem about ``[kernel."a\\nb"]`` finds its line."""
    if not quoted.startswith('"') or "\\" not in quoted:
        return quoted[1:-1]
    from kernelkit.errors import InputFileError
    from kernelkit.util.inputs import parse_toml

    try:
        return str(parse_toml(f"k = {quoted}", "build.toml")["k"])
    except InputFileError:  # not reached for text tomllib accepted; keep the scan going
        return quoted[1:-1]
