"""The values a build reports: progress events while it runs, an outcome per variant after.

The library emits :class:`BuildEvent` values to an ``on_event`` callback and returns
:class:`Outcome` values; rendering either (progress bars, plain lines, JSON) is the CLI's job.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from kernelkit.artifact.metadata import Metadata
from kernelkit.builder.caches.compiler_cache import CacheStats
from kernelkit.builder.compile.progress import Step
from kernelkit.errors import WHOSE, RefusalKind

Status = Literal["built", "cached", "failed", "skipped"]


@dataclass(frozen=True)
class BuildResult:
    """One variant that was built: where it is, its log, its sealed metadata."""

    variant: str
    path: Path
    log_path: Path
    metadata: Metadata
    seconds: float = 0.0
    unit_times: Mapping[str, float] = field(default_factory=dict)  # slowest first
    compiler_cache: CacheStats | None = None  # ccache hits and misses of this build


@dataclass(frozen=True)
class Outcome:
    variant: str
    status: Status
    message: str = ""
    path: Path | None = None
    log_path: Path | None = None
    seconds: float = 0.0
    error: BaseException | None = field(default=None, compare=False, repr=False)
    result: BuildResult | None = field(default=None, compare=False, repr=False)
    who: RefusalKind | None = None  # a refused variant: whose limitation that is

    @property
    def explanation(self) -> str:
        """The message, prefixed with whose limitation it is for a refused variant."""
        return f"{WHOSE[self.who]}: {self.message}" if self.who else self.message

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "variant": self.variant, "status": self.status, "message": self.message,
            "who": self.who,
            "path": str(self.path) if self.path else None,
            "log": str(self.log_path) if self.log_path else None,
            "seconds": round(self.seconds, 2)}
        if self.result is not None and self.result.unit_times:
            out["unit-seconds"] = dict(self.result.unit_times)
        if self.result is not None and self.result.compiler_cache is not None:
            stats = self.result.compiler_cache
            out["compiler-cache"] = {"hits": stats.hits, "misses": stats.misses,
                                     "remote-hits": stats.remote_hits,
                                     "remote-errors": stats.remote_errors}
        return out


@dataclass(frozen=True)
class BuildEvent:
    """Something the user may want to see while a plan runs."""

    kind: Literal["start", "environment", "progress", "done"]
    variant: str
    message: str = ""
    outcome: Outcome | None = None
    step: Step | None = None


OnEvent = Callable[[BuildEvent], None]


def ignore_event(event: BuildEvent) -> None:
    return None
