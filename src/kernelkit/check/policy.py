"""The compliance policies, loaded from the JSON data files in ``check/policy/``.

- ``manylinux_2_28.json``: allowed symbol versions per architecture (auditwheel's policy).
- ``stable_abi.json``: CPython's stable-ABI function/data symbols by the version that added them.
- ``needed.json``: shared libraries an extension may depend on (fnmatch patterns).
- ``torch_stable_abi.json``: libtorch's stable C ABI (the ``aoti_torch_*``/``torch_*`` shims),
  the version of torch that added each newer shim, and the C++ namespaces that are not stable.
"""

from __future__ import annotations

import fnmatch
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

POLICY_DIR = Path(__file__).parent / "policy"


def _load(name: str) -> Any:
    return json.loads((POLICY_DIR / name).read_text(encoding="utf-8"))


def _version_key(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split("."))


@dataclass(frozen=True)
class ManylinuxPolicy:
    name: str
    symbol_versions: dict[str, dict[str, frozenset[str]]]  # arch -> DEP -> versions

    def violation(self, arch: str, version_tag: str) -> str | None:
        """Why ``version_tag`` (e.g. ``GLIBC_2.34``) breaks the policy, or ``None``."""
        dep, sep, version = version_tag.partition("_")
        tracked = self.symbol_versions.get(arch, {})
        if not sep or dep not in tracked or version in tracked[dep]:
            return None
        allowed = sorted((v for v in tracked[dep] if v[:1].isdigit()), key=_version_key)
        ceiling = allowed[-1] if allowed else "none"
        return f"{version_tag} is not allowed by {self.name} ({dep} up to {ceiling})"


@lru_cache(maxsize=1)
def manylinux_policy() -> ManylinuxPolicy:
    data = _load("manylinux_2_28.json")
    versions = {arch: {dep: frozenset(vs) for dep, vs in deps.items()}
                for arch, deps in data["symbol_versions"].items()}
    return ManylinuxPolicy(data["name"], versions)


@dataclass(frozen=True)
class StableAbi:
    added: dict[str, str]  # symbol -> Python version that added it to the stable ABI

    def violation(self, symbol: str, python_abi: str = "3.9") -> str | None:
        """Why an undefined ``symbol`` breaks abi3 for ``python_abi``, or ``None``."""
        version = self.added.get(symbol)
        if version is not None:
            if _version_key(version) > _version_key(python_abi):
                return (f"{symbol} joined the stable ABI in Python {version}, after "
                        f"{python_abi}")
            return None
        if symbol.startswith(("Py", "_Py")):
            return f"{symbol} is not part of the stable ABI (abi3)"
        return None


@lru_cache(maxsize=1)
def stable_abi() -> StableAbi:
    data = _load("stable_abi.json")
    return StableAbi({sym: ver for ver, syms in data["added"].items() for sym in syms})


@dataclass(frozen=True)
class NeededPolicy:
    allowed: dict[str, tuple[str, ...]]  # group -> patterns

    def allows(self, library: str) -> bool:
        return any(fnmatch.fnmatchcase(library, pat)
                   for pats in self.allowed.values() for pat in pats)


@lru_cache(maxsize=1)
def needed_policy() -> NeededPolicy:
    data = _load("needed.json")
    return NeededPolicy({k: tuple(v) for k, v in data["allowed"].items()})


# Itanium-mangled names in c10::, at:: or torch:: (nested names, with or without const/ref
# qualifiers, and their typeinfo/vtable objects): _ZN3c10..., _ZNK2at..., _ZTIN5torch...
_MANGLED_NS = re.compile(r"^_Z(?:T[IVST]|GV|TH|TW)?N[KVRO]*(?:3c10|2at|5torch)")
_STABLE_MANGLED = re.compile(r"^_Z(?:T[IVST]|GV|TH|TW)?N[KVRO]*5torch(?:6stable|10headeronly)")


@dataclass(frozen=True)
class TorchStableAbi:
    """libtorch's stable C ABI: which shim each torch version added; what is not stable."""

    added: dict[str, str]  # shim symbol -> torch version ("2.12") that added it
    prefixes: tuple[str, ...]  # C shim prefixes ("aoti_torch_", "torch_")

    def violation(self, symbol: str, target: str) -> tuple[str, str] | None:
        """``(code, why)`` when an undefined ``symbol`` breaks the stable ABI of torch
        ``target`` ("2.11"); ``None`` when it is allowed."""
        version = self.added.get(symbol)
        if version is not None:
            if _version_key(version) > _version_key(target):
                return ("torch-stable-abi-version",
                        (f"{symbol} was added to torch's stable C ABI in torch {version}, after "
                        f"the variant's stable-ABI version {target}"))
            return None
        if symbol.startswith(self.prefixes):
            return None
        if _MANGLED_NS.match(symbol) and not _STABLE_MANGLED.match(symbol):
            return ("torch-stable-abi",
                    f"{symbol} is a C++ symbol of libtorch/c10, outside torch's stable C ABI")
        return None


@lru_cache(maxsize=1)
def torch_stable_abi() -> TorchStableAbi:
    data = _load("torch_stable_abi.json")
    return TorchStableAbi({sym: ver for ver, syms in data["added"].items() for sym in syms},
                          tuple(data["stable-prefixes"]))
