"""``check_build``: every compliance rule over every variant of a build tree."""

from __future__ import annotations

import functools
import sys
import zipfile
from collections import defaultdict
from collections.abc import Callable, Mapping
from pathlib import Path

from kernelkit.artifact.layout import discover_variants
from kernelkit.artifact.metadata import Metadata
from kernelkit.check.elf import read_elf
from kernelkit.check.elf_rules import check_elf
from kernelkit.check.import_rules import check_import
from kernelkit.check.layout_rules import check_digest, check_files, check_metadata, rel
from kernelkit.check.ops_rules import python_files, unprefixed_registrations
from kernelkit.check.report import Finding, Report, finding, sort_findings
from kernelkit.errors import ElfReadError, MetadataError
from kernelkit.manifest.model import Manifest
from kernelkit.variants.matrix import MatrixCompliance, matrix_compliance
from kernelkit.variants.name import Variant, parse_variant


def _parse(name: str) -> Variant | None:
    try:
        return parse_variant(name)
    except ValueError:
        return None


def find_variant_dirs(path: Path) -> list[Path]:
    """``path`` itself when it is a variant, else the variants of the build tree under it
    (:func:`kernelkit.artifact.layout.discover_variants`)."""
    tree = discover_variants(path, include_self=True)
    return list(tree.variants) if tree else []


def check_matrix(path: Path, manifest: Manifest) -> list[MatrixCompliance]:
    """Which variants the supported matrix requires are missing from the build tree at
    ``path`` (a project, its ``build/``, or anything :func:`discover_variants` finds)."""
    tree = discover_variants(path)
    return matrix_compliance(tree.names if tree else (), manifest)


def check_build(path: Path, *, python: Path | None = None,
                variant_pythons: Mapping[str, Path] | None = None,
                import_check: bool = True, python_abi: str = "3.9") -> Report:
    """Check every variant under ``path`` (a project, its ``build/``, or one variant).

    Imports run in a fresh ``variant_pythons[variant]`` or ``python`` (default: this
    interpreter); ``import_check=False`` skips them (static checks only).
    """
    dirs = find_variant_dirs(path)
    if not dirs:
        f = finding("no-variants", "", f"{path}: no build variants found (no directory holding "
                    "a metadata.json or named like a variant)")
        return Report(path, (), (f,))
    findings: list[Finding] = []
    metas: dict[str, Metadata] = {}
    for vdir in dirs:
        interp = (variant_pythons or {}).get(vdir.name) or python or Path(sys.executable)
        meta, found = _check_variant(vdir, interp if import_check else None, python_abi)
        findings += found
        if meta is not None:
            metas[vdir.name] = meta
    findings += _tree_rules(metas)
    return Report(path, tuple(d.name for d in dirs), sort_findings(findings))


def _check_variant(vdir: Path, python: Path | None, python_abi: str
                   ) -> tuple[Metadata | None, list[Finding]]:
    name = vdir.name
    variant = _parse(name)
    out: list[Finding] = []
    if variant is None:
        out.append(finding("variant-name", name, f"{name!r} is not a variant name"))
    meta = _read_metadata(vdir, out)
    out += check_files(vdir, variant, meta)
    if meta is not None:
        out += check_metadata(vdir, variant, meta)
        out += check_digest(vdir, meta)
    out += _elf_rules(vdir, python_abi, _stable_abi_target(variant))
    out += _registration_rules(vdir, meta)
    importable = not any(f.code in ("missing-init", "missing-ops") for f in out)
    if python is not None and meta is not None and variant is not None and importable:
        out += check_import(vdir, variant, meta, python)
    return meta, out


def _read_metadata(vdir: Path, out: list[Finding]) -> Metadata | None:
    path = vdir / "metadata.json"
    if not path.is_file():
        out.append(finding("missing-metadata", vdir.name, "metadata.json is missing",
                           file="metadata.json"))
        return None
    try:
        return Metadata.read(path)
    except MetadataError as exc:
        out.append(finding("invalid-metadata", vdir.name, exc.message, file="metadata.json"))
        return None


def _stable_abi_target(variant: Variant | None) -> str | None:
    """"2.11" for ``torch-stable-abi211-...`` (its binary must use only that stable C ABI)."""
    if variant is None or variant.framework != "torch-stable-abi" or not variant.framework_version:
        return None
    return "{}.{}".format(*variant.framework_version)


def _elf_rules(vdir: Path, python_abi: str, torch_stable_abi: str | None = None
               ) -> list[Finding]:
    out: list[Finding] = []
    for lib in sorted(p for p in vdir.rglob("*.so") if p.is_file()):
        file = rel(lib, vdir)
        try:
            facts = read_elf(lib)
        except ElfReadError as exc:
            out.append(finding("unreadable-elf", vdir.name, exc.message, file=file))
            continue
        out += check_elf(facts, vdir.name, file, python_abi=python_abi,
                         torch_stable_abi=torch_stable_abi)
    return out


def _sources(vdir: Path, meta: Metadata | None) -> list[tuple[str, Callable[[], str]]]:
    """``(file, read)`` of the variant's Python sources; in ``<id>.zip`` for build-layout zip
    (named ``<id>.zip/<member>``)."""
    if meta is None or meta.build_layout != "zip":
        return [(rel(py, vdir), functools.partial(py.read_text, encoding="utf-8"))
                for py in python_files(vdir)]
    archive = vdir / f"{meta.id}.zip"
    try:
        with zipfile.ZipFile(archive) as zf:
            members = {n: zf.read(n) for n in sorted(zf.namelist()) if n.endswith(".py")}
    except (OSError, zipfile.BadZipFile):
        return []  # reported by check_files
    return [(f"{archive.name}/{n}", functools.partial(data.decode, "utf-8"))
            for n, data in members.items()]


def _registration_rules(vdir: Path, meta: Metadata | None) -> list[Finding]:
    out: list[Finding] = []
    for file, read in _sources(vdir, meta):
        try:
            regs = unprefixed_registrations(read(), file)
        except (SyntaxError, UnicodeDecodeError) as exc:
            out.append(finding("import-failed", vdir.name, f"{file} does not parse: {exc}",
                               file=file, fix="fix the syntax error and rebuild"))
            continue
        out += [finding("op-registration", vdir.name,
                        f"{file}:{r.line}: @{r.kind} on {r.name} does not use "
                        "add_op_namespace_prefix(...)", file=file) for r in regs]
    return out


def _tree_rules(metas: Mapping[str, Metadata]) -> list[Finding]:
    out: list[Finding] = []
    kernels = {(m.name, m.version) for m in metas.values()}
    if len(kernels) > 1:
        listing = ", ".join(f"{v}: {m.name} v{m.version}" for v, m in sorted(metas.items()))
        out.append(finding("inconsistent-kernel", "", f"variants disagree: {listing}"))
    ids: dict[str, set[str]] = defaultdict(set)
    for m in metas.values():
        ids[m.backend].add(m.id)
    for backend, found in sorted(ids.items()):
        if len(found) > 1:
            out.append(finding("namespace-mismatch", "", f"{backend} variants use "
                               f"{len(found)} op namespaces: {', '.join(sorted(found))}"))
    return out
