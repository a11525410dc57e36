"""Findings and the report ``check_build`` returns (values; the CLI renders them)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kernelkit.check.codes import Severity, code


@dataclass(frozen=True)
class Finding:
    code: str
    severity: Severity
    variant: str  # variant directory name ("" for findings about the whole tree)
    file: str | None  # path relative to the variant directory
    message: str
    fix: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def finding(name: str, variant: str, message: str, *, file: str | None = None,
            fix: str | None = None) -> Finding:
    """A finding with the severity and default fix of code ``name``."""
    entry = code(name)
    return Finding(name, entry.severity, variant, file, message, fix or entry.fix)


@dataclass(frozen=True)
class Report:
    root: Path
    variants: tuple[str, ...] = ()
    findings: tuple[Finding, ...] = field(default_factory=tuple)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "error"]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "warning"]

    @property
    def ok(self) -> bool:
        return not self.errors

    def codes(self, variant: str | None = None) -> set[str]:
        return {f.code for f in self.findings if variant is None or f.variant == variant}

    def by_variant(self) -> dict[str, list[Finding]]:
        out: dict[str, list[Finding]] = {v: [] for v in ("", *self.variants)}
        for f in self.findings:
            out.setdefault(f.variant, []).append(f)
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "root": str(self.root),
            "ok": self.ok,
            "variants": list(self.variants),
            "errors": len(self.errors),
            "warnings": len(self.warnings),
            "findings": [f.to_json() for f in self.findings],
        }


def sort_findings(findings: Iterable[Finding]) -> tuple[Finding, ...]:
    rank = {"error": 0, "warning": 1}
    return tuple(sorted(findings, key=lambda f: (f.variant, rank[f.severity], f.code,
                                                 f.file or "", f.message)))
