"""serve's web stack stays out of kernelkit and its CLI.

Moved from tests/unit/test_serve_ndjson.py: it starts a fresh interpreter.
"""

from __future__ import annotations


def test_serve_stack_is_not_imported_by_kernelkit_or_its_cli() -> None:
    import subprocess
    import sys

    code = ("import sys, kernelkit, kernelkit.cli.main as m; m.build_parser(); "
            "print(sorted({n.split('.')[0] for n in sys.modules} & {'starlette', 'uvicorn'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
