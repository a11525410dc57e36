"""Facts about an ELF shared library, read with pyelftools (imported lazily: ``build`` extra).

Only what the compliance rules need: architecture, DT_NEEDED, RPATH/RUNPATH and the undefined
dynamic symbols with the symbol version each one requires.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kernelkit.errors import ElfReadError, KernelkitError

_MACHINES = {"EM_X86_64": "x86_64", "EM_AARCH64": "aarch64", "EM_386": "i686",
             "EM_PPC64": "ppc64le", "EM_S390": "s390x", "EM_ARM": "armv7l"}


@dataclass(frozen=True)
class UndefinedSymbol:
    name: str
    version: str | None  # e.g. "GLIBC_2.34"; None when unversioned
    library: str | None  # the DT_NEEDED entry the version belongs to


@dataclass(frozen=True)
class ElfFacts:
    path: Path
    arch: str
    needed: tuple[str, ...]
    rpath: tuple[str, ...]
    runpath: tuple[str, ...]
    undefined: tuple[UndefinedSymbol, ...]


def _require_elftools() -> Any:
    try:
        import elftools.elf.elffile as elffile
    except ImportError:  # pragma: no cover - depends on the environment
        raise KernelkitError("reading shared libraries needs pyelftools",
                             hint="pip install 'kernelkit[build]'") from None
    return elffile


def read_elf(path: Path) -> ElfFacts:
    """Read the facts of ``path``; raise :class:`ElfReadError` if it is not ELF."""
    elffile = _require_elftools()
    from elftools.common.exceptions import ELFError

    try:
        with path.open("rb") as fh:
            elf = elffile.ELFFile(fh)
            return _facts(path, elf)
    except (ELFError, OSError, ValueError, KeyError) as exc:
        raise ElfReadError(f"{path}: not a readable ELF file ({exc})",
                           hint="rebuild the variant") from None


def _facts(path: Path, elf: Any) -> ElfFacts:
    machine = elf.header["e_machine"]
    arch = _MACHINES.get(machine, str(machine))
    if arch == "ppc64le" and not elf.little_endian:
        arch = "ppc64"
    needed: list[str] = []
    rpath: list[str] = []
    runpath: list[str] = []
    dynamic = elf.get_section_by_name(".dynamic")
    if dynamic is not None:
        for tag in dynamic.iter_tags():
            if tag.entry.d_tag == "DT_NEEDED":
                needed.append(tag.needed)
            elif tag.entry.d_tag == "DT_RPATH":
                rpath += [p for p in tag.rpath.split(":") if p]
            elif tag.entry.d_tag == "DT_RUNPATH":
                runpath += [p for p in tag.runpath.split(":") if p]
    return ElfFacts(path, arch, tuple(needed), tuple(rpath), tuple(runpath),
                    tuple(_undefined_symbols(elf)))


def _version_needs(elf: Any) -> dict[int, tuple[str, str]]:
    """versym index -> (version name, library) from ``.gnu.version_r``."""
    out: dict[int, tuple[str, str]] = {}
    verneed = elf.get_section_by_name(".gnu.version_r")
    if verneed is None:
        return out
    for need, auxes in verneed.iter_versions():
        for aux in auxes:
            out[aux["vna_other"]] = (aux.name, need.name)
    return out


def _undefined_symbols(elf: Any) -> list[UndefinedSymbol]:
    dynsym = elf.get_section_by_name(".dynsym")
    if dynsym is None:
        return []
    versym = elf.get_section_by_name(".gnu.version")
    needs = _version_needs(elf)
    out: list[UndefinedSymbol] = []
    for i, sym in enumerate(dynsym.iter_symbols()):
        if not sym.name or sym["st_shndx"] != "SHN_UNDEF":
            continue
        version = library = None
        if versym is not None:
            ndx = versym.get_symbol(i)["ndx"]
            if isinstance(ndx, int) and (ndx & 0x7FFF) in needs:  # 0x8000: hidden bit
                version, library = needs[ndx & 0x7FFF]
        out.append(UndefinedSymbol(sym.name, version, library))
    return out
