"""The public API as users' type checkers see it: every lazy export of ``kernelkit`` is mirrored
in ``__init__``'s ``TYPE_CHECKING`` block, so ``kernelkit.get_kernel`` has its real signature
under mypy instead of ``Any`` (issue 28)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import kernelkit

INIT = Path(kernelkit.__file__)


def _type_checking_imports() -> dict[str, str]:
    """name -> module, for every ``from M import N as N`` under ``if TYPE_CHECKING:``."""
    tree = ast.parse(INIT.read_text(encoding="utf-8"))
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for stmt in node.body:
                if isinstance(stmt, ast.ImportFrom) and stmt.module != "typing":
                    for alias in stmt.names:
                        assert alias.asname == alias.name, f"re-export {alias.name} as itself"
                        found[alias.name] = stmt.module or ""
    return found


def test_every_lazy_export_is_mirrored_for_type_checkers() -> None:
    assert _type_checking_imports() == kernelkit._EXPORTS


def test_mypy_sees_the_real_signature_of_get_kernel(tmp_path: Path) -> None:
    api = pytest.importorskip("mypy.api")
    user = tmp_path / "user_code.py"
    user.write_text(
        "import kernelkit\n"
        "reveal_type(kernelkit.get_kernel)\n"
        "reveal_type(kernelkit.has_kernel)\n"
        "kernelkit.get_kernel(42)\n",
        encoding="utf-8",
    )
    out, _err, _status = api.run([
        str(user), "--no-error-summary",
        "--cache-dir", str(Path(__file__).resolve().parents[2] / ".mypy_cache"),
    ])
    revealed = [line for line in out.splitlines() if "Revealed type" in line]
    assert len(revealed) == 2, out
    assert "def (repo_id: str" in revealed[0] and "-> types.ModuleType" in revealed[0], revealed[0]
    assert revealed[1].endswith("-> bool\""), revealed[1]
    # A wrong argument type is caught, which `Any` would let through.
    assert "incompatible type" in out and "user_code.py:4" in out, out
