"""``symbols.json``: a kernel's public functions and layers, readable without importing it
(upstream-0.19.md; read by ``kernels describe-api`` and ``kernelkit describe-api``).

```json
{"schema_version": 1,
 "functions": [{"name": "relu"}],
 "layers": [{"name": "ReLU", "attributes": {"has_backward": true, "can_torch_compile": null}}]}
```

Every build writes it into the variant before sealing, so the digest covers it. The build
does not import the kernel (a CUDA variant cannot be imported on the machine that builds it),
so the symbols come from the package's source, read statically:

* functions: the public names ``__init__.py`` exports (its literal ``__all__``, else every
  public top-level name) that it binds with ``def`` or imports from its own modules (not the
  generated ``_ops``), and, when ``__all__`` names it, binds to a call, lambda or other name
  (``relu = jax_op(...)``, not an UPPER_CASE constant); submodules (``layers``), classes and
  literals are not functions;
* layers: the public classes of the ``layers`` module (``layers.py`` or ``layers/``, filtered by
  its literal ``__all__``, following ``from .x import Name`` one module deep);
* a layer's ``has_backward`` / ``can_torch_compile``: the literal ``True``/``False`` its class
  body assigns, else ``null`` (unknown: set elsewhere, inherited or computed).

A zip-layout variant is read from its ``<id>.zip``.
"""

from __future__ import annotations

import ast
import json
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kernelkit.errors import SymbolsError
from kernelkit.util.fs import atomic_write_text

SYMBOLS_NAME = "symbols.json"
SCHEMA_VERSION = 1
ATTRIBUTES = ("has_backward", "can_torch_compile")

Reader = Callable[[str], "str | None"]


@dataclass(frozen=True)
class Layer:
    name: str
    attributes: dict[str, bool | None] = field(default_factory=dict)


@dataclass(frozen=True)
class Symbols:
    functions: tuple[str, ...]
    layers: tuple[Layer, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "functions": [{"name": n} for n in self.functions],
            "layers": [{"name": la.name,
                        "attributes": {a: la.attributes.get(a) for a in ATTRIBUTES}}
                       for la in self.layers],
        }

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=2) + "\n"


# --- reading the package source ---------------------------------------------------------------


def _parse(read: Reader, path: str) -> ast.Module | None:
    text = read(path)
    if text is None:
        return None
    try:
        return ast.parse(text, filename=path)
    except (SyntaxError, ValueError):  # the import check reports it; no symbols from it
        return None


def _assigned(node: ast.stmt) -> tuple[list[str], ast.expr | None]:
    """The plain names an assignment statement binds, and its value."""
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)], node.value
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target.id], node.value
    return [], None


def _strings(value: ast.expr | None) -> list[str] | None:
    """The strings of a literal list or tuple of strings, else ``None``."""
    if not isinstance(value, (ast.List, ast.Tuple)):
        return None
    out = [e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return out if len(out) == len(value.elts) else None


def _literal_all(tree: ast.Module) -> list[str] | None:
    for node in tree.body:
        names, value = _assigned(node)
        if "__all__" in names:
            return _strings(value)
    return None


def _is_module(read: Reader, base: str, name: str) -> bool:
    return read(f"{base}{name}.py") is not None or read(f"{base}{name}/__init__.py") is not None


_MAYBE_CALLABLE = (ast.Call, ast.Lambda, ast.Name, ast.Attribute)


def _bindings(tree: ast.Module) -> dict[str, str]:
    """Top-level name -> how ``__init__.py`` binds it: ``def``, ``class``, ``import``
    (from its own modules, not ``_ops``), ``other`` (assignments, foreign imports)."""
    out: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out[node.name] = "def"
        elif isinstance(node, ast.ClassDef):
            out[node.name] = "class"
        elif isinstance(node, ast.ImportFrom):
            own = node.level >= 1 and node.module not in ("_ops", None)
            for a in node.names:
                out[a.asname or a.name] = "import" if own else "other"
        elif isinstance(node, ast.Import):
            for a in node.names:
                out[(a.asname or a.name).split(".")[0]] = "other"
        else:
            names, value = _assigned(node)
            # `relu = jax_op(...)`, `f = other_f`: may be a function; a literal is not
            how = "assigned" if isinstance(value, _MAYBE_CALLABLE) else "other"
            for name in names:
                out[name] = how
    return out


def _functions(read: Reader) -> list[str]:
    tree = _parse(read, "__init__.py")
    if tree is None:
        return []
    bound = _bindings(tree)
    exported = _literal_all(tree)
    names = exported if exported is not None else [n for n, how in bound.items()
                                                   if how in ("def", "import")]
    kinds = ("def", "import", "assigned") if exported is not None else ("def", "import")
    return sorted({n for n in names if not n.startswith("_") and bound.get(n) in kinds
                   and not (bound[n] == "assigned" and n.isupper())  # a CONSTANT
                   and not _is_module(read, "", n)})


def _class_attributes(node: ast.ClassDef) -> dict[str, bool | None]:
    found: dict[str, bool | None] = dict.fromkeys(ATTRIBUTES)
    for stmt in node.body:
        names, value = _assigned(stmt)
        flag = value.value if isinstance(value, ast.Constant) and isinstance(
            value.value, bool) else None
        for name in names:
            if name in ATTRIBUTES:
                found[name] = flag
    return found


def _classes(tree: ast.Module) -> dict[str, ast.ClassDef]:
    return {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}


def _layers(read: Reader) -> list[Layer]:
    base = "layers/" if read("layers/__init__.py") is not None else ""
    path = "layers/__init__.py" if base else "layers.py"
    tree = _parse(read, path)
    if tree is None:
        return []
    classes = _classes(tree)
    if base:  # `from .relu import ReLU` inside layers/__init__.py: one module deep
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
                sub = _parse(read, f"{base}{node.module.replace('.', '/')}.py")
                found = _classes(sub) if sub is not None else {}
                for alias in node.names:
                    if alias.name in found:
                        classes.setdefault(alias.asname or alias.name, found[alias.name])
    wanted = _literal_all(tree)
    names = [n for n in classes if not n.startswith("_") and (wanted is None or n in wanted)]
    return [Layer(n, _class_attributes(classes[n])) for n in sorted(names)]


def package_symbols(read: Reader) -> Symbols:
    """The symbols of the package whose files ``read(relpath)`` returns (``None``: absent)."""
    return Symbols(tuple(_functions(read)), tuple(_layers(read)))


def directory_reader(root: Path) -> Reader:
    def read(rel: str) -> str | None:
        try:
            return (root / rel).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None
    return read


def archive_reader(archive: Path) -> Reader:
    try:
        with zipfile.ZipFile(archive) as zf:
            files = {n: zf.read(n) for n in zf.namelist() if n.endswith(".py")}
    except (OSError, zipfile.BadZipFile):
        files = {}

    def read(rel: str) -> str | None:
        data = files.get(rel)
        try:
            return None if data is None else data.decode("utf-8")
        except UnicodeDecodeError:
            return None
    return read


def variant_symbols(variant_dir: Path, build_layout: str = "files",
                    kernel_id: str = "") -> Symbols:
    """The symbols of a variant's package (in ``<kernel_id>.zip`` for the zip layout)."""
    if build_layout == "zip":
        return package_symbols(archive_reader(variant_dir / f"{kernel_id}.zip"))
    return package_symbols(directory_reader(variant_dir))


def write_symbols(variant_dir: Path, build_layout: str = "files", kernel_id: str = "") -> Symbols:
    """Write ``variant_dir/symbols.json`` (before the variant is sealed)."""
    symbols = variant_symbols(variant_dir, build_layout, kernel_id)
    atomic_write_text(variant_dir / SYMBOLS_NAME, symbols.dumps())
    return symbols


# --- reading symbols.json ------------------------------------------------------------------------


def parse_symbols(raw: bytes | str, source: Path | str = SYMBOLS_NAME) -> Symbols:
    """Validate a ``symbols.json`` (schema 1, as kernels 0.19 checks it); ``SymbolsError``
    names the file and what is wrong."""
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise SymbolsError(source, f"not valid JSON ({str(exc)[:200]})") from None
    if not isinstance(data, dict) or data.get("schema_version") != SCHEMA_VERSION:
        raise SymbolsError(source, f"unsupported schema; expected schema_version {SCHEMA_VERSION}")
    groups: dict[str, list[dict[str, Any]]] = {}
    for group in ("functions", "layers"):
        items = data.get(group)
        if not isinstance(items, list) or not all(
                isinstance(i, dict) and isinstance(i.get("name"), str) for i in items):
            raise SymbolsError(source, f"{group} must be a list of named symbols")
        groups[group] = items
    layers = []
    for item in groups["layers"]:
        attrs = item.get("attributes")
        if not isinstance(attrs, dict) or any(
                v is not None and not isinstance(v, bool) for v in attrs.values()):
            raise SymbolsError(source, f"layer {item['name'][:80]!r}: attributes must be "
                                "booleans or null")
        layers.append(Layer(item["name"], dict(attrs)))
    return Symbols(tuple(i["name"] for i in groups["functions"]), tuple(layers))


def read_symbols(path: Path) -> Symbols:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise SymbolsError(path, "file not found") from None
    except OSError as exc:
        raise SymbolsError(path, f"cannot read it ({exc.strerror or exc})") from None
    return parse_symbols(raw, path)
