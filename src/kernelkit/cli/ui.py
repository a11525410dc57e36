"""What commands print besides their data (docs/cli.md "Output"): notes and progress on
stderr, silenced by ``-q``; the data on stdout, as text or, with ``--json``, one JSON document.

``main`` sets :data:`settings` from the parsed ``-v``/``-q`` before a command runs.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from typing import Any


@dataclass
class Settings:
    verbosity: int = 0  # -1: -q, 0: normal, 1: -v

    @property
    def quiet(self) -> bool:
        return self.verbosity < 0


settings = Settings()


def note(text: str) -> None:
    """A line for the person at the terminal (what was done, what to do next): stderr,
    not with ``-q``."""
    if not settings.quiet:
        print(text, file=sys.stderr, flush=True)


def warn(text: str) -> None:
    """A warning: stderr, also with ``-q``."""
    print(f"warning: {text}", file=sys.stderr, flush=True)


def emit_json(data: Any) -> None:
    """The one JSON document a ``--json`` command prints on stdout."""
    print(json.dumps(data, indent=2, ensure_ascii=False))


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 variant``, ``2 variants`` (``many``: an irregular plural)."""
    return f"{n} {word if n == 1 else many or word + 's'}"
