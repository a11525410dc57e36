"""The op-registration rule (upstream ``torch-ops-check``, upstream-builder.md §5.2).

A top-level ``def``/``async def``/``class`` decorated with a call to ``custom_op``,
``triton_op``, ``register_kernel``, ``register_fake``, ``register_vmap`` or
``register_torch_dispatch`` (bare or as an attribute, with at least one positional argument)
must pass ``add_op_namespace_prefix(...)`` as the first argument; otherwise the op lands in a
namespace shared with other kernels. Nested definitions and argument-less decorators are not
checked.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

REGISTRATION_DECORATORS = frozenset({"custom_op", "triton_op", "register_kernel",
                                     "register_fake", "register_vmap",
                                     "register_torch_dispatch"})
PREFIX_FUNCTION = "add_op_namespace_prefix"


@dataclass(frozen=True)
class Registration:
    line: int
    kind: str  # the decorator's name
    name: str  # the decorated definition


def _callee_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _uses_prefix(arg: ast.expr) -> bool:
    return isinstance(arg, ast.Call) and _callee_name(arg.func) == PREFIX_FUNCTION


def unprefixed_registrations(source: str, filename: str = "<string>") -> list[Registration]:
    """Registrations in ``source`` that do not go through ``add_op_namespace_prefix``.

    Raises ``SyntaxError`` if ``source`` does not parse."""
    tree = ast.parse(source, filename=filename)
    out = []
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for deco in node.decorator_list:
            if not isinstance(deco, ast.Call) or not deco.args:
                continue
            kind = _callee_name(deco.func)
            if kind in REGISTRATION_DECORATORS and not _uses_prefix(deco.args[0]):
                out.append(Registration(deco.lineno, kind, node.name))
    return out


def python_files(variant_dir: Path) -> list[Path]:
    return sorted(p for p in variant_dir.rglob("*.py") if "__pycache__" not in p.parts)
