"""docs/design.md is the one map of the code: every module and every ``KERNELKIT_*`` setting
the code reads is on it, and nothing on it is gone from the code.

A new module or setting fails here until the map names it, so the map cannot drift the way
three hand-kept maps did (issue 28).
"""

from __future__ import annotations

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
_SETTING = re.compile(r"""["'](KERNELKIT_[A-Z0-9_]*[A-Z0-9])["']""")


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


def test_every_setting_the_code_reads_is_on_the_map() -> None:
    text = DESIGN.read_text(encoding="utf-8")
    read: dict[str, str] = {}
    for path in sorted(SRC.rglob("*.py")):
        for name in _SETTING.findall(path.read_text(encoding="utf-8")):
            read.setdefault(name, str(path.relative_to(SRC)))
    missing = {name: where for name, where in read.items() if f"`{name}`" not in text}
    assert missing == {}, "KERNELKIT_* settings read by the code but absent from docs/design.md"


def test_the_map_is_parsed_at_all() -> None:
    """Guards the two tests above against a parser that silently finds nothing."""
    mapped = _mapped_modules()
    assert {"errors.py", "loader/api.py", "builder/compile/variant.py", "cli/main.py"} <= mapped
