"""A tiny ``{{ placeholder }}`` renderer for scaffold templates (no Jinja dependency).

Only ``{{ identifier }}`` (letters, digits, ``_``; spaces inside the braces allowed) is
substituted. Anything else between double braces (``{{ x.y }}``, ``{% ... %}``) is left as is,
so C++ brace initialisers and later-stage templates survive untouched. A placeholder that the
context does not define is an error: it is a bug in the template, not something to guess.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from kernelkit.errors import TemplateError

PLACEHOLDER_RE = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


def placeholders(text: str) -> set[str]:
    """The placeholder names used in ``text``."""
    return set(PLACEHOLDER_RE.findall(text))


def render(text: str, context: Mapping[str, str], *, where: str = "<template>") -> str:
    """Replace every ``{{ name }}`` in ``text`` with ``context[name]``."""
    missing = sorted(placeholders(text) - set(context))
    if missing:
        raise TemplateError(
            f"{where}: undefined placeholder(s) {', '.join(missing)}",
            hint=f"defined placeholders are: {', '.join(sorted(context))}",
        )
    return PLACEHOLDER_RE.sub(lambda m: context[m.group(1)], text)
