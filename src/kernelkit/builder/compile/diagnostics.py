"""A failed build's errors as the author wants them: the compiler's diagnostics in the project's
own files first, as ``path/relative/to/project:line:col: error: ...`` with the source lines the
compiler quoted, then errors elsewhere (torch's headers, generated files); for a failed
configure, CMake's errors with their messages (kernelkit's checks among them). Pure: text in,
lines out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

# gcc/clang: "file:12:5: error: msg"; nvcc/cudafe++: "file(12): error: msg"
_GCC = re.compile(r"^(?P<file>[^\s:][^:]*):(?P<line>\d+):(?:(?P<col>\d+):)?\s*"
                  r"(?P<kind>fatal error|error):\s*(?P<msg>.*)$")
_NVCC = re.compile(r"^(?P<file>[^\s(][^(]*)\((?P<line>\d+)\):\s*(?P<kind>error):?\s*(?P<msg>.*)$")
_CONTEXT = re.compile(r"^(\s+\d+ \||\s+\||\s+\^|\s{2,}\S)")  # gcc's quoted source and caret
_CMAKE = re.compile(r"^CMake Error")


@dataclass(frozen=True)
class Diagnostic:
    file: str  # relative to the project when inside it
    line: int
    column: int | None
    message: str
    context: tuple[str, ...]
    in_project: bool

    def render(self) -> list[str]:
        col = f":{self.column}" if self.column is not None else ""
        return [f"{self.file}:{self.line}{col}: {self.message}", *self.context]


def _relative(file: str, root: Path | None, cwd: Path | None) -> tuple[str, bool]:
    """``file`` relative to ``root`` and whether it is under it; a relative ``file`` (ccache
    hands the compiler paths relative to the build directory) is taken from ``cwd``."""
    if root is None:
        return file, False
    path = Path(file) if cwd is None else cwd / file
    try:
        return path.resolve().relative_to(root.resolve()).as_posix(), True
    except (ValueError, OSError):
        return file, False


def parse_diagnostics(lines: list[str], project: Path | None, generated: Path | None = None,
                      cwd: Path | None = None) -> list[Diagnostic]:
    """Every error diagnostic in ``lines``, in order; relative paths are from ``cwd`` (the
    build directory); files under ``generated`` (the generated CMake project, a copy of
    kernelkit's files) do not count as the project's."""
    out: list[Diagnostic] = []
    for i, line in enumerate(lines):
        m = _GCC.match(line) or _NVCC.match(line)
        if not m:
            continue
        name = m.group("file").strip()
        file, ours = _relative(name, project, cwd)
        if generated is not None and ours and _relative(name, generated, cwd)[1]:
            ours = False
        context = []
        for follow in lines[i + 1:i + 4]:
            if not _CONTEXT.match(follow) or _GCC.match(follow) or _NVCC.match(follow):
                break
            context.append(follow)
        col = m.groupdict().get("col")
        out.append(Diagnostic(file, int(m.group("line")), int(col) if col else None,
                              f"{m.group('kind')}: {m.group('msg').strip()}", tuple(context),
                              ours))
    return out


def first_errors(log_text: str, project: Path | None, *, generated: Path | None = None,
                 cwd: Path | None = None, limit: int = 5) -> list[str]:
    """The lines to show for a failed build: from ninja's last ``FAILED:`` step (else the whole
    log), the project's own error diagnostics first, then the others, at most ``limit``; with
    no diagnostic, CMake's errors with their messages; empty when there is neither."""
    start = log_text.rfind("FAILED:")
    lines = log_text[start:].splitlines() if start >= 0 else log_text.splitlines()
    diags = parse_diagnostics(lines, project, generated, cwd)
    ordered = [d for d in diags if d.in_project] + [d for d in diags if not d.in_project]
    out: list[str] = []
    for d in ordered[:limit]:
        out += d.render()
    if len(ordered) > limit:
        out.append(f"... and {len(ordered) - limit} more error(s) in the log")
    if out:
        return out
    for i in [i for i, line in enumerate(lines) if _CMAKE.match(line)][:limit]:
        block = lines[i:i + 6]
        end = next((j for j, ln in enumerate(block) if j and not ln.strip()), len(block))
        out += block[:end]  # the error and its message, up to CMake's blank line
    return out
