"""What a running compile is doing, from ninja's own output and log.

``NinjaProgress`` turns ninja's status lines (``[3/10] <command>`` with ``--verbose``) into
steps done of total, the file being compiled, elapsed time and a naive estimate of what
remains. ``unit_times`` reads ninja's ``.ninja_log`` (start and end of every output, in ms) for
the translation units compiled by one build, slowest first.
"""

from __future__ import annotations

import re
import shlex
import time
from dataclasses import dataclass, field
from pathlib import Path

_STATUS_RE = re.compile(r"^\[(\d+)/(\d+)\] (.*)$")
_SOURCE_SUFFIXES = (".cu", ".cpp", ".cc", ".cxx", ".c", ".mm", ".m")
_OBJECT_RE = re.compile(r"^(?:.*/)?CMakeFiles/[^/]+\.dir/(.*)\.o(?:bj)?$")


@dataclass(frozen=True)
class Step:
    """One finished ninja step (kernelkit sets ``NINJA_STATUS="[%f/%t] "``: finished of total;
    ninja prints a step when it finishes unless it writes to a terminal)."""

    done: int
    total: int
    what: str  # the source file being compiled, or what ninja does (link, ...)
    elapsed: float
    remaining: float | None  # seconds, once a step has finished


def describe(command: str) -> str:
    """The file a compile command works on (``-c FILE`` or a source argument), else the
    command's first word (``linking`` for a link step)."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    for i, word in enumerate(words):
        if word == "-c" and i + 1 < len(words):
            return Path(words[i + 1]).name
    for word in words:
        if word.endswith(_SOURCE_SUFFIXES) and not word.startswith("-"):
            return Path(word).name
    if any(w in ("-shared", "-o") for w in words) and not any(w == "-c" for w in words):
        return "linking"
    return Path(words[0]).name if words else command


@dataclass
class NinjaProgress:
    """Feed it every output line of ``ninja``; it returns a :class:`Step` for status lines."""

    started: float = field(default_factory=time.monotonic)

    def feed(self, line: str) -> Step | None:
        m = _STATUS_RE.match(line)
        if not m:
            return None
        done, total = int(m.group(1)), int(m.group(2))
        elapsed = time.monotonic() - self.started
        remaining = elapsed / done * (total - done) if done > 0 else None
        return Step(done, total, describe(m.group(3)), elapsed, remaining)


def ninja_log_length(build_dir: Path) -> int:
    """How many lines ``.ninja_log`` has now (entries after this are the next build's)."""
    try:
        return len((build_dir / ".ninja_log").read_text(encoding="utf-8").splitlines())
    except OSError:
        return 0


def unit_times(build_dir: Path, since_line: int = 0,
               project: Path | None = None) -> dict[str, float]:
    """Seconds per translation unit compiled after line ``since_line`` of ``.ninja_log``,
    slowest first; units are named by their source path (relative to ``project`` when under
    it, else to the generated CMake project)."""
    prefix = str(project).strip("/") + "/" if project is not None else None
    try:
        lines = (build_dir / ".ninja_log").read_text(encoding="utf-8").splitlines()
    except OSError:
        return {}
    times: dict[str, float] = {}
    for line in lines[since_line:]:
        parts = line.split("\t")
        if line.startswith("#") or len(parts) < 4:
            continue
        m = _OBJECT_RE.match(parts[3])
        if m and parts[0].isdigit() and parts[1].isdigit():
            unit = m.group(1)
            if prefix and unit.startswith(prefix):
                unit = unit[len(prefix):]
            times[unit] = round((int(parts[1]) - int(parts[0])) / 1000, 2)
    return dict(sorted(times.items(), key=lambda kv: (-kv[1], kv[0])))
