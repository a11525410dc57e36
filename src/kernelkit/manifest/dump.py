"""Write a ``Manifest`` back as edition-5 ``build.toml`` text.

A small serializer for exactly the types a manifest holds (strings, integers, versions, arrays
of strings, kernel-dependency inline tables). Key order is fixed, so the output is stable and
``parse_manifest(dump_manifest(m))`` gives back ``m``. Defaults are left out (an unset
``pyext``, empty flag lists), so a migrated file stays as short as the original.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from kernelkit.manifest.model import (
    CURRENT_EDITION,
    BackendGeneral,
    General,
    KernelComponent,
    KernelDependency,
    Manifest,
    TorchFramework,
    TorchNoarch,
    TvmFfi,
    Version,
)
from kernelkit.util.quote import toml_string

Value = str | int | Version | Sequence[str] | Sequence[KernelDependency] | dict[str, Version]

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+\Z")
MAX_LINE = 100
DEFAULT_PYEXT = ("py", "pyi")


def dump_manifest(manifest: Manifest) -> str:
    """The edition-5 TOML text of ``manifest``."""
    tables = [*_general_tables(manifest.general), _framework_table(manifest)]
    tables += [(f"kernel.{_key(k.name)}", _kernel_items(k)) for k in manifest.kernels]
    return "\n".join(_table(header, items) for header, items in tables)


def _general_tables(general: General) -> list[tuple[str, list[tuple[str, Value | None]]]]:
    items: list[tuple[str, Value | None]] = [
        ("name", general.name),
        ("version", general.version),
        ("edition", CURRENT_EDITION),
        ("license", general.license),
        ("backends", general.backends),
        ("upstream", general.upstream),
        ("source", general.source),
        ("python-depends", general.python_depends or None),
        ("kernel-depends", general.kernel_depends or None),
    ]
    tables = [("general", items)]
    if general.hub.repo_id is not None or general.hub.branch is not None:
        tables.append(("general.hub", [("repo-id", general.hub.repo_id),
                                       ("branch", general.hub.branch)]))
    for backend in ("cuda", "neuron", "tpu", "xpu"):
        extra: BackendGeneral | None = getattr(general, backend)
        if extra is not None:
            tables.append((f"general.{backend}", [
                ("minver", extra.minver),
                ("maxver", extra.maxver),
                ("python-depends", extra.python_depends or None),
                ("kernel-depends", extra.kernel_depends or None),
            ]))
    return tables


def _framework_table(manifest: Manifest) -> tuple[str, list[tuple[str, Value | None]]]:
    fw = manifest.framework
    pyext = None if fw.pyext == DEFAULT_PYEXT else fw.pyext
    if isinstance(fw, TorchNoarch):
        return fw.kind, [("pyext", pyext),
                         ("cuda_capabilities", fw.cuda_capabilities or None),
                         ("rocm_archs", fw.rocm_archs or None)]
    items: list[tuple[str, Value | None]] = [
        ("src", fw.src), ("include", fw.include or None), ("pyext", pyext)]
    if isinstance(fw, TorchFramework):
        items += [("minver", fw.minver), ("maxver", fw.maxver), ("stable-abi", fw.stable_abi)]
    if isinstance(fw, (TorchFramework, TvmFfi)):
        items.append(("cxx-flags", fw.cxx_flags or None))
    return fw.kind, items


def _kernel_items(k: KernelComponent) -> list[tuple[str, Value | None]]:
    return [
        ("backend", k.backend),
        ("depends", k.depends),
        ("src", k.src),
        ("include", k.include or None),
        ("cxx-flags", k.cxx_flags or None),
        ("cuda-capabilities", k.cuda_capabilities),
        ("cuda-flags", k.cuda_flags or None),
        ("cuda-minver", k.cuda_minver),
        ("rocm-archs", k.rocm_archs),
        ("hip-flags", k.hip_flags or None),
        ("sycl-flags", k.sycl_flags or None),
    ]


def _table(header: str, items: Iterable[tuple[str, Value | None]]) -> str:
    lines = [f"[{header}]"]
    lines += [_assignment(key, value) for key, value in items if value is not None]
    return "\n".join(lines) + "\n"


def _assignment(key: str, value: Value) -> str:
    prefix = f"{_key(key)} = "
    if not isinstance(value, (list, tuple)):
        return prefix + _scalar(value)
    items = [_scalar(v) for v in value]
    one_line = prefix + "[" + ", ".join(items) + "]"
    if len(one_line) <= MAX_LINE:
        return one_line
    return prefix + "[\n" + "".join(f"    {item},\n" for item in items) + "]"


def _scalar(value: object) -> str:
    if isinstance(value, bool):
        raise TypeError("booleans do not occur in build.toml")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Version):
        return toml_string(str(value))
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, KernelDependency):
        pin = ("version", str(value.version)) if value.version is not None \
            else ("revision", toml_string(value.revision or ""))
        return f"{{ repo-id = {toml_string(value.repo_id)}, {pin[0]} = {pin[1]} }}"
    if isinstance(value, dict):
        inner = ", ".join(f"{_key(k)} = {_scalar(v)}" for k, v in value.items())
        return f"{{ {inner} }}"
    raise TypeError(f"cannot write {type(value).__name__} to build.toml")


def _key(key: str) -> str:
    return key if _BARE_KEY.match(key) else toml_string(key)
