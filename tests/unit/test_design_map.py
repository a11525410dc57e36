"""docs/design.md is the one map of the code: every module is on it, and nothing on it is gone
from the code; every environment variable the code reads is declared in ``kernelkit.settings``,
whose declarations are the map's settings table, and nothing else reads the environment.

A new module or setting fails here until the map names it, so the map cannot drift the way
three hand-kept maps did (issue 28).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "kernelkit"
DESIGN = ROOT / "docs" / "design.md"

# "#### `builder/` one pipeline ..." opens a package's section; "#### top level" the root's.
_SECTION = re.compile(r"^#### (?:`(?P<pkg>[a-z_/]+)/`|top level)")
# "- `plan.py`: ..." (a module entry; sub-packages are headed `builder/plan/`)
_ENTRY = re.compile(r"^- `(?P<mod>[A-Za-z_][A-Za-z0-9_]*\.py)`")
# A setting read by the code: the variable's name as a whole string literal.
_SETTING = re.compile(r"""["']((?:KERNELKIT|HF)_[A-Z0-9_]*[A-Z0-9])["']""")
# Reading the process environment directly: os.environ, os.getenv, os.environb.
_ENVIRON = re.compile(r"\bos\.(?:environ|getenv|environb)\b"
                      r"|\bfrom os import [^\n]*\b(?:environ|getenv)\b")
_TABLE_START = "<!-- settings table: generated from src/kernelkit/settings.py -->\n"
_TABLE_END = "<!-- end of settings table -->"


def _mapped_modules() -> set[str]:
    """Module paths (``builder/plan/variant_plan.py``) that docs/design.md lists, by section."""
    mapped: set[str] = set()
    package: str | None = None
    for line in DESIGN.read_text(encoding="utf-8").splitlines():
        heading = _SECTION.match(line)
        if heading:
            package = heading.group("pkg") or ""
            continue
        if line.startswith("## "):
            package = None
        entry = _ENTRY.match(line)
        if entry and package is not None and entry.group("mod") != "__init__.py":
            mapped.add(f"{package}/{entry.group('mod')}" if package else entry.group("mod"))
    return mapped


def _code_modules() -> set[str]:
    return {
        str(path.relative_to(SRC))
        for path in SRC.rglob("*.py")
        if path.name != "__init__.py" and "templates" not in path.relative_to(SRC).parts
    }


def _code_packages() -> set[str]:
    return {
        str(path.parent.relative_to(SRC))
        for path in SRC.rglob("__init__.py")
        if path.parent != SRC and "templates" not in path.relative_to(SRC).parts
    }


def test_every_module_is_on_the_map_and_the_map_lists_no_missing_module() -> None:
    mapped, code = _mapped_modules(), _code_modules()
    assert sorted(code - mapped) == [], "modules missing from docs/design.md"
    assert sorted(mapped - code) == [], "docs/design.md lists modules that do not exist"


def test_every_package_has_a_section() -> None:
    text = DESIGN.read_text(encoding="utf-8")
    missing = [pkg for pkg in sorted(_code_packages()) if f"#### `{pkg}/`" not in text]
    assert missing == [], "packages without a '#### `pkg/`' section in docs/design.md"


def test_every_setting_the_code_reads_is_declared() -> None:
    """A ``KERNELKIT_*``/``HF_*`` name anywhere in src is one ``settings.py`` declares."""
    from kernelkit.settings import SETTINGS

    declared = {s.name for s in SETTINGS}
    read: dict[str, str] = {}
    for path in sorted(SRC.rglob("*.py")):
        for name in _SETTING.findall(path.read_text(encoding="utf-8")):
            read.setdefault(name, str(path.relative_to(SRC)))
    missing = {name: where for name, where in read.items() if name not in declared}
    assert missing == {}, "variables read by the code but not declared in kernelkit/settings.py"
    assert "KERNELKIT_CACHE" in read and "HF_ENDPOINT" in read  # the scan finds names at all


def test_the_settings_table_is_the_declarations() -> None:
    """docs/design.md's settings table is ``settings.markdown_table()``, exactly;
    ``KERNELKIT_UPDATE_GOLDEN=1`` writes it."""
    from kernelkit.settings import markdown_table

    text = DESIGN.read_text(encoding="utf-8")
    start, end = text.index(_TABLE_START), text.index(_TABLE_END)
    table = text[start + len(_TABLE_START):end]
    if os.environ.get("KERNELKIT_UPDATE_GOLDEN") == "1" and table != markdown_table():
        DESIGN.write_text(text[:start + len(_TABLE_START)] + markdown_table() + text[end:],
                          encoding="utf-8")
        return
    assert table == markdown_table(), "regenerate with KERNELKIT_UPDATE_GOLDEN=1"


def test_only_the_settings_module_reads_the_process_environment() -> None:
    """Everything else gets values or a mapping from the edge (the generated
    ``torch_info.py`` runs standalone in another interpreter: it reads its own)."""
    allowed = {"settings.py", "generate/torch_info.py"}
    readers = sorted(
        str(path.relative_to(SRC)) for path in SRC.rglob("*.py")
        if str(path.relative_to(SRC)) not in allowed
        and _ENVIRON.search(path.read_text(encoding="utf-8")))
    assert readers == [], "read the environment through kernelkit.settings"


def test_the_map_is_parsed_at_all() -> None:
    """Guards the two tests above against a parser that silently finds nothing."""
    mapped = _mapped_modules()
    assert {"errors.py", "loader/api.py", "builder/compile/variant.py", "cli/main.py"} <= mapped
