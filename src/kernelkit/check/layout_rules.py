"""Rules over one variant directory's files and its metadata.json (no ELF, no import)."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

from kernelkit.artifact.metadata import Metadata
from kernelkit.artifact.symbols import SYMBOLS_NAME, read_symbols
from kernelkit.check.report import Finding, finding
from kernelkit.errors import SymbolsError
from kernelkit.variants.name import Variant

STRAY_DIRS = frozenset({"_cmake_build", "CMakeFiles", ".eggs"})
STRAY_SUFFIXES = (".o", ".obj", ".a", ".egg-info", ".ninja", ".ninja_log", ".ninja_deps")
STRAY_NAMES = frozenset({"CMakeCache.txt", "cmake_install.cmake", "Makefile", "build.ninja"})
UNIQUE_ID_RE = r"(?:[0-9a-f]{7}(?:_dirty)?|[a-z2-7]{13})"


def rel(path: Path, variant_dir: Path) -> str:
    return path.relative_to(variant_dir).as_posix()


def check_files(variant_dir: Path, variant: Variant | None, meta: Metadata | None
                ) -> list[Finding]:
    """Package files present (on disk, or inside ``<id>.zip`` for build-layout zip), the one
    extension named after the id, ``symbols.json`` valid, no build leftovers."""
    name = variant_dir.name
    if meta is not None and meta.build_layout == "zip":
        out = _zip_package(variant_dir, meta)
    else:
        out = [finding(code, name, f"{file} is missing", file=file)
               for code, file in (("missing-init", "__init__.py"), ("missing-ops", "_ops.py"))
               if not (variant_dir / file).is_file()]
    out += _symbols(variant_dir)
    out += _stray(variant_dir)
    if meta is not None:
        out += _extensions(variant_dir, variant, meta)
    return out


def _zip_package(variant_dir: Path, meta: Metadata) -> list[Finding]:
    """build-layout zip: ``<id>.zip`` holds the package, ``__init__.py`` and ``_ops.py`` at its
    root."""
    name = variant_dir.name
    archive = f"{meta.id}.zip"
    try:
        with zipfile.ZipFile(variant_dir / archive) as zf:
            members = set(zf.namelist())
    except (OSError, zipfile.BadZipFile) as exc:
        return [finding("missing-init", name, f"metadata.json says build-layout zip, but "
                        f"{archive} cannot be read ({exc})", file=archive,
                        fix="a zip-layout variant keeps its package in <metadata id>.zip")]
    return [finding(code, name, f"{archive} has no {file} at its root", file=archive)
            for code, file in (("missing-init", "__init__.py"), ("missing-ops", "_ops.py"))
            if file not in members]


def _symbols(variant_dir: Path) -> list[Finding]:
    path = variant_dir / SYMBOLS_NAME
    if not path.is_file():
        return [finding("missing-symbols", variant_dir.name, f"{SYMBOLS_NAME} is missing",
                        file=SYMBOLS_NAME)]
    try:
        read_symbols(path)
    except SymbolsError as exc:
        return [finding("invalid-symbols", variant_dir.name, exc.message, file=SYMBOLS_NAME)]
    return []


def _is_stray(path: Path) -> bool:
    return (path.name in STRAY_DIRS or path.name in STRAY_NAMES
            or path.name.endswith(STRAY_SUFFIXES))


def _stray(variant_dir: Path) -> list[Finding]:
    out = []
    bytecode = []
    for path in sorted(variant_dir.rglob("*")):
        r = rel(path, variant_dir)
        if "__pycache__" in path.parts or path.suffix == ".pyc":
            bytecode.append(r)
        elif any(_is_stray(parent) for parent in path.relative_to(variant_dir).parents
                 if parent != Path(".")):
            continue  # reported with its directory
        elif _is_stray(path):
            out.append(finding("stray-file", variant_dir.name,
                               f"{r} is a build leftover, not part of a kernel", file=r))
    if bytecode:
        out.append(finding("bytecode", variant_dir.name,
                           f"{len(bytecode)} bytecode file(s), e.g. {bytecode[0]}",
                           file=bytecode[0]))
    return out


def _extensions(variant_dir: Path, variant: Variant | None, meta: Metadata) -> list[Finding]:
    name = variant_dir.name
    found = sorted(rel(p, variant_dir) for p in variant_dir.rglob("*.so") if p.is_file())
    arch = variant is not None and variant.is_arch
    expected = None
    if arch and variant is not None:
        expected = (f"{meta.id}.so" if variant.framework == "tvm-ffi"
                    else f"{meta.id}.{variant.python_abi or 'abi3'}.so")
    out = []
    if expected is not None and expected not in found:
        out.append(finding("missing-extension", name,
                           f"{expected} (the extension named after metadata id) is missing",
                           file=expected))
    for lib in found:
        if lib != expected:
            what = "a noarch variant ships no compiled code" if not arch else (
                f"only {expected} is expected")
            out.append(finding("extra-extension", name, f"{lib}: {what}", file=lib))
    return out


def check_metadata(variant_dir: Path, variant: Variant | None, meta: Metadata
                   ) -> list[Finding]:
    """Backend and id consistent with the variant; provenance clean."""
    name = variant_dir.name
    out = []
    if variant is not None and not backend_matches(variant, meta.backend):
        out.append(finding("backend-mismatch", name,
                           f"metadata backend is {meta.backend!r} but the variant name says "
                           f"{variant.backend!r}", file="metadata.json"))
    id_re = rf"_{re.escape(meta.python_name)}_{re.escape(meta.backend)}_{UNIQUE_ID_RE}"
    if not re.fullmatch(id_re, meta.id):
        out.append(finding(
            "bad-id", name,
            f"id {meta.id!r} is not _{meta.python_name}_{meta.backend}_<unique id> (7 hex "
            "digits of the git tree, optionally _dirty, or 13 random base32 characters)",
            file="metadata.json"))
    if meta.id.endswith("_dirty") or (meta.provenance is not None and meta.provenance.dirty):
        out.append(finding("dirty-build", name, f"{meta.id} was built from a dirty source tree",
                           file="metadata.json"))
    return out


def backend_matches(variant: Variant, backend: str) -> bool:
    """Whether metadata ``backend`` fits the variant name: the same backend, or ``agnostic``
    (kernels 0.19: no backend) for a variant without compiled code for one backend
    (``torch-universal``, ``sdk``, noarch and SDK variants). ``torch-npu`` is CANN's."""
    named = "cann" if variant.backend == "npu" else variant.backend
    if named in ("universal", "agnostic"):
        return True
    return backend == named or (backend == "agnostic" and not variant.is_arch)


def check_digest(variant_dir: Path, meta: Metadata) -> list[Finding]:
    name = variant_dir.name
    if meta.digest is None:
        return [finding("missing-digest", name, "metadata.json has no digest",
                        file="metadata.json")]
    return [finding("digest-mismatch", name, str(v), file=v.path)
            for v in meta.digest.verify(variant_dir)]
