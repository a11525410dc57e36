"""What every benchmark script does with its results: one JSON file, also printed."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path


def write_json(out: Path, results: Mapping[str, object]) -> None:
    """Write ``results`` to ``out`` as indented JSON (its folder made)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")


def write_results(results: Mapping[str, object], out: Path) -> int:
    """Write ``results`` to ``out``, print them, and return 0 (the exit status of a script's
    ``main``)."""
    write_json(out, results)
    print(json.dumps(results, indent=2))
    return 0
