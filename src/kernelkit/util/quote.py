"""Values in generated files: one function per target language, and the grammars of names.

Every value from ``build.toml`` that reaches a generated file goes through exactly one of:

* :func:`cmake_quote`: a CMake quoted argument that CMake reads back as exactly the value and
  as one list element (``\\``, ``"`` and ``$`` escaped, so no variable is expanded); values it
  cannot represent so are refused (:func:`cmake_refusal` says why);
* :func:`python_literal`: a Python literal (``ast.literal_eval`` gives the value back);
* :func:`toml_string`: a TOML basic string;
* :func:`email_header_value`: a header of a wheel's core metadata (``METADATA``);
* a grammar, for values written bare (names, identifiers): :func:`check_kernel_name`,
  :func:`check_python_identifier`.

``check-config`` reports the same refusals with their line (``manifest/validate.py`` asks
:func:`cmake_refusal` and the grammars), so a valid manifest never fails here; a manifest
built in code that skipped validation gets :class:`~kernelkit.errors.UnsafeValueError` and
no file is written. ``tests/reliability/test_fuzz.py`` runs real ``cmake -P``, ``tomllib``
and ``ast`` on fuzzed values.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Mapping, Sequence

from kernelkit.errors import UnsafeValueError

#: ``[kernel.<name>]``: written bare into CMake (function arguments, the variable
#: ``KK_CUDA_ARCHS_<name>``, ``-D`` options) and as a key of the generated ``setup.py``.
KERNEL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,99}")
_CMAKE_ESCAPES = {"\\": "\\\\", '"': '\\"', "$": "\\$"}
_TOML_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f",
                 "\r": "\\r"}


# --- CMake ----------------------------------------------------------------------------------


def cmake_refusal(value: str) -> str | None:
    """Why ``value`` cannot be one CMake value (``None``: it can)."""
    if not value.isprintable():
        return "holds a control or non-printable character (a newline, a tab, ...)"
    if ";" in value:
        return "holds ';', CMake's list separator (it would become several values)"
    if "$<" in value:
        return "holds '$<', which CMake reads as a generator expression"
    return None


def cmake_quote(value: str) -> str:
    """``value`` as a CMake quoted argument: read back as exactly ``value``, one element."""
    why = cmake_refusal(value)
    if why is not None:
        raise UnsafeValueError("CMake", value, why)
    return '"' + "".join(_CMAKE_ESCAPES.get(ch, ch) for ch in value) + '"'


# --- Python ---------------------------------------------------------------------------------

PythonValue = str | int | bool | None | Sequence["PythonValue"] | Mapping[str, "PythonValue"]


def python_literal(value: PythonValue) -> str:
    """A Python literal of ``value`` (strings, integers, booleans, ``None``, lists, tuples and
    string-keyed dicts of those): ``ast.literal_eval`` of the text gives ``value`` back."""
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, int):
        return str(value)  # ValueError beyond the int-string digit limit: never from a manifest
    if isinstance(value, str):
        return repr(value)  # Python's own escaping: quotes, backslashes, every control char
    if isinstance(value, list):
        return "[" + ", ".join(python_literal(v) for v in value) + "]"
    if isinstance(value, tuple):
        inner = ", ".join(python_literal(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, dict):
        items = (f"{python_literal(k)}: {python_literal(v)}" for k, v in value.items())
        return "{" + ", ".join(items) + "}"
    raise UnsafeValueError("Python", repr(value), f"a {type(value).__name__} is not a literal")


def is_python_identifier(value: str) -> bool:
    """An ASCII Python identifier that is not a keyword (a module or attribute name)."""
    return value.isascii() and value.isidentifier() and not keyword.iskeyword(value)


def check_python_identifier(value: str, what: str) -> str:
    """``value`` if :func:`is_python_identifier`, else ``UnsafeValueError``."""
    if not is_python_identifier(value):
        raise UnsafeValueError("Python", value, f"{what} must be an ASCII Python identifier")
    return value


def check_identifier_part(value: str, what: str) -> str:
    """``value`` if it can end an identifier (``_<name>_<value>``: letters, digits, ``_``)."""
    if not value or not is_python_identifier("_" + value):
        raise UnsafeValueError("Python", value, f"{what} may hold only ASCII letters, digits "
                               "and '_'")
    return value


# --- TOML -----------------------------------------------------------------------------------


def toml_string(value: str) -> str:
    """``value`` as a TOML basic string (control characters escaped)."""
    out = []
    for ch in value:
        if ch in _TOML_ESCAPES:
            out.append(_TOML_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        elif 0xD800 <= ord(ch) <= 0xDFFF:
            raise UnsafeValueError("TOML", value, "holds a lone surrogate, which TOML (UTF-8) "
                                   "cannot hold")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


# --- core metadata (a wheel's METADATA, email-header style) ---------------------------------


def email_header_value(value: str) -> str:
    """``value`` as one header value of a wheel's ``METADATA``: every line break becomes a
    folded continuation line (a header never ends early, so no other header can be
    injected); other control characters become spaces."""
    lines = "".join(ch if ch.isprintable() or ch == "\n" else " " for ch in
                    value.replace("\r\n", "\n").replace("\r", "\n")).split("\n")
    return "\n        ".join(line.strip() or "." for line in lines) if len(lines) > 1 \
        else lines[0]


# --- names written bare ---------------------------------------------------------------------


def is_kernel_name(value: str) -> bool:
    return KERNEL_NAME.fullmatch(value) is not None


def check_kernel_name(value: str, what: str = "a kernel name") -> str:
    """A ``[kernel.<name>]`` name (or another name of that grammar: a backend, a dependency
    id) that may be written bare into CMake (``KERNEL_NAME``)."""
    if not is_kernel_name(value):
        raise UnsafeValueError("CMake", value, f"{what} uses letters, digits, '_', '.' and '-', "
                               "starts with a letter or '_', at most 100 characters")
    return value
