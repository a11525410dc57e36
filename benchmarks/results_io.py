"""What every benchmark script does with its results: one JSON file, also printed."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path


def write_results(results: Mapping[str, object], out: Path) -> int:
    """Write ``results`` to ``out`` (its folder made), print them, and return 0 (the exit
    status of a script's ``main``)."""
    text = json.dumps(results, indent=2)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text + "\n")
    print(text)
    return 0
