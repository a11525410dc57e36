"""Parse and validate ``build.toml``: TOML syntax, edition dispatch, schema, cross-field checks.

Editions (upstream spec §1.1): ``general.edition = 5`` is read with the edition-5 rules; any
other integer is refused. Without ``edition`` the file is read with the edition-4 rules, then
the edition-3 rules. ``parse_manifest``/``load_manifest`` accept edition 4 with a warning and
refuse edition 3 (run ``kernelkit update-build``); ``read_manifest`` accepts all three and is
what ``update_build`` uses. Every problem is reported at once in one ``ManifestError``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kernelkit.errors import InputFileError, ManifestError, Problem
from kernelkit.manifest.locate import LineIndex
from kernelkit.manifest.model import CURRENT_EDITION, Manifest
from kernelkit.manifest.read import read_build
from kernelkit.manifest.validate import check_manifest
from kernelkit.manifest.values import Reader
from kernelkit.util.inputs import MAX_TOML_BYTES, parse_toml, read_input_text

MANIFEST_NAME = "build.toml"
V4_WARNING = ("{file} uses the pre-edition (edition 4) format; it was upgraded in memory. "
              "Run `kernelkit update-build` to rewrite it as edition 5.")


def parse_manifest(text: str, path: Path | None = None, root: Path | None = None, *,
                   check_sources: bool = True) -> Manifest:
    """The edition-5 model of ``text``; raises ``ManifestError`` listing every problem.

    ``path`` names the file in messages; ``root`` (default: ``path``'s directory when ``path``
    is given) is the project directory that source paths are checked against.
    """
    manifest, problems = _read(text, path, root, check_sources, accept_v3=False)
    if problems:
        raise ManifestError(path, problems)
    if manifest.source_edition == 4:
        warning = V4_WARNING.format(file=path or MANIFEST_NAME)
        manifest = dataclasses.replace(manifest, warnings=(*manifest.warnings, warning))
    return manifest


def load_manifest(kernel_dir: Path, *, check_sources: bool = True) -> Manifest:
    """Read ``<kernel_dir>/build.toml`` (``kernel_dir`` may also name the file itself)."""
    path = manifest_path(kernel_dir)
    return parse_manifest(read_text(path), path, path.parent, check_sources=check_sources)


def manifest_path(kernel_dir: Path) -> Path:
    kernel_dir = Path(kernel_dir)
    if kernel_dir.name == MANIFEST_NAME and not kernel_dir.is_dir():
        return kernel_dir
    return kernel_dir / MANIFEST_NAME


def read_text(path: Path) -> str:
    """The text of ``path`` (the one bounded reader: a regular file of at most
    ``MAX_TOML_BYTES``); a missing or unreadable file is a ``ManifestError``."""
    try:
        return read_input_text(path, MAX_TOML_BYTES)
    except (FileNotFoundError, NotADirectoryError):
        err = ManifestError(path, [Problem(path, None, "", f"{path} does not exist")])
        err.hint = (f"{path.parent} is not a kernel project; run `kernelkit init` to create "
                    "one, or pass the project directory")
        raise err from None
    except InputFileError as exc:
        raise ManifestError(path, [Problem(path, exc.line, "", exc.reason)]) from None


def read_manifest(text: str, path: Path | None = None, root: Path | None = None, *,
                  check_sources: bool = True) -> Manifest:
    """The model of a manifest of any supported edition (5, 4 or 3), without edition policy."""
    manifest, problems = _read(text, path, root, check_sources, accept_v3=True)
    if problems:
        raise ManifestError(path, problems)
    return manifest


@dataclass
class _Attempt:
    """The model read with one edition's rules, and the reader holding its problems."""

    manifest: Manifest
    reader: Reader
    matched: bool = True  # False: no edition's schema fitted; this one came closest


def _read(text: str, path: Path | None, root: Path | None, check_sources: bool, *,
          accept_v3: bool) -> tuple[Manifest, list[Problem]]:
    """The model and every problem; the edition is chosen on the schema rules alone."""
    if root is None and path is not None:
        root = path.parent
    raw = _load_toml(text, path)
    index = LineIndex(text)
    edition = _probe_edition(raw, path, index)
    if edition is not None:
        attempt = _attempt(raw, edition, path, index)
    else:
        attempt = _read_pre_edition(raw, path, index)
    manifest = dataclasses.replace(attempt.manifest, path=path)
    reader = attempt.reader
    check_manifest(manifest, reader, root, check_sources)
    if manifest.source_edition == 3 and attempt.matched and not accept_v3:
        reader.problem("general.edition", "this build.toml uses the old edition-3 format, "
                       "which is no longer accepted; run `kernelkit update-build` to convert "
                       "it to edition 5")
    problems = sorted(reader.problems, key=lambda p: (p.line is None, p.line or 0))
    return manifest, problems


def _read_pre_edition(raw: dict[str, Any], path: Path | None, index: LineIndex) -> _Attempt:
    """No ``edition``: edition-4 rules first (stricter), then edition 3."""
    v4 = _attempt(raw, 4, path, index)
    if not v4.reader.problems:
        return v4
    v3 = _attempt(raw, 3, path, index)
    if not v3.reader.problems:
        return v3
    closest = v4 if len(v4.reader.problems) <= len(v3.reader.problems) else v3
    closest.matched = False
    closest.reader.problem(
        "general.edition",
        f"no `edition` key, so the file was checked as a pre-edition file (closest: edition "
        f"{closest.manifest.source_edition}); add `edition = {CURRENT_EDITION}` to [general] "
        "if it is meant to use the current format")
    return closest


def _attempt(raw: dict[str, Any], edition: int, path: Path | None,
             index: LineIndex) -> _Attempt:
    reader = Reader(path, index)
    return _Attempt(read_build(raw, edition, reader), reader)


MAX_DEPTH = 32  # tables/arrays nested deeper than any build.toml needs


def _load_toml(text: str, path: Path | None) -> dict[str, Any]:
    try:
        data = parse_toml(text, path or MANIFEST_NAME)
    except InputFileError as exc:
        raise ManifestError(path, [Problem(path, exc.line, "", exc.reason)]) from None
    if nesting_depth(data) > MAX_DEPTH:
        raise ManifestError(path, [Problem(path, None, "", "tables or arrays are nested more "
                                           f"than {MAX_DEPTH} levels deep")])
    return data


def nesting_depth(value: object) -> int:
    """How deeply dicts and lists nest in ``value`` (iterative: no recursion limit)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            deepest = max(deepest, depth)
            stack += [(v, depth + 1) for v in item if isinstance(v, (dict, list))]
    return deepest


def _probe_edition(raw: dict[str, Any], path: Path | None, index: LineIndex) -> int | None:
    general = raw.get("general")
    if not isinstance(general, dict) or "edition" not in general:
        return None
    edition = general["edition"]
    line = index.line_of("general.edition")
    if isinstance(edition, bool) or not isinstance(edition, int):
        raise ManifestError(path, [Problem(path, line, "general.edition",
                                           f"expected an integer (edition = {CURRENT_EDITION}), "
                                           f"got {edition!r}")])
    if edition != CURRENT_EDITION:
        advice = ("upgrade kernelkit" if edition > CURRENT_EDITION else
                  f"files of earlier editions have no `edition` key; use edition = "
                  f"{CURRENT_EDITION}")
        raise ManifestError(path, [Problem(path, line, "general.edition",
                                           f"unsupported build edition {edition}; {advice}")])
    return edition
