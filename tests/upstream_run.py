"""Run a snippet under upstream ``kernels`` 0.19.1 (installed in the test interpreter's
environment by ``scripts/setup.sh``) in a fresh interpreter, for side-by-side comparisons.

A fresh process keeps the two loaders apart: both import kernels by executing their
``__init__.py``, and a torch op namespace can be defined once per process. The snippet prints
one JSON value on its last line of stdout; :func:`run_upstream` returns it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from typing import Any

import pytest

UPSTREAM_VERSION = "0.19.1"


def require_upstream() -> None:
    """Skip unless upstream ``kernels`` is exactly the release the comparison is about."""
    try:
        from importlib.metadata import version

        found = version("kernels")
    except Exception:
        pytest.skip("upstream kernels is not installed (./scripts/setup.sh installs it)")
    if found != UPSTREAM_VERSION:
        pytest.skip(f"upstream kernels {found} installed; these comparisons are with "
                    f"{UPSTREAM_VERSION}")


def run_upstream(code: str, *args: str, env: dict[str, str] | None = None,
                 timeout: float = 180) -> Any:
    """Run ``code`` (dedented; ``sys.argv[1:]`` = ``args``) with upstream kernels; return the
    JSON value printed on its last stdout line."""
    require_upstream()
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args],
                          capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})
    assert proc.returncode == 0, f"upstream snippet failed:\n{proc.stderr[-4000:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])
