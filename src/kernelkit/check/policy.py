"""The compliance policies, loaded from the JSON data files in ``check/policy/``.

- ``manylinux_2_28.json``: allowed symbol versions per architecture (auditwheel's policy).
- ``stable_abi.json``: CPython's stable-ABI function/data symbols by the version that added them.
- ``needed.json``: shared libraries an extension may depend on (fnmatch patterns).
"""

from __future__ import annotations

import fnmatch
import json
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
