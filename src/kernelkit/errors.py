"""One exception tree for kernelkit.

Every error carries structured fields (for programs) and renders a message that tells a
person what went wrong and what to do next (for people). Only ``kernelkit.cli`` prints them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal


class KernelkitError(Exception):
    """Base of every error kernelkit raises on purpose."""

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        if self.hint:
            return f"{self.message}\n  hint: {self.hint}"
        return self.message


# --- manifest -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Problem:
    """One problem found in a file: where it is, which field, what is wrong."""

    file: Path | None
    line: int | None
    field: str
    message: str

    def __str__(self) -> str:
        where = str(self.file) if self.file else "<input>"
        if self.line is not None:
            where += f":{self.line}"
        field = f" {self.field}:" if self.field else ""
        return f"{where}:{field} {self.message}"


class ManifestError(KernelkitError):
    """``build.toml`` is invalid; ``problems`` lists every problem found, not only the first."""

    def __init__(self, path: Path | None, problems: Sequence[Problem]) -> None:
        self.path = path
        self.problems = list(problems)
        n = len(self.problems)
        head = f"{path or 'build.toml'}: {n} problem{'s' if n != 1 else ''} found"
        body = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(f"{head}\n{body}", hint="fix the fields above and run the command again")


# --- build ----------------------------------------------------------------------------------


class CommandError(KernelkitError):
    """An external command (cmake, ninja, nvcc, pip, git, ...) failed."""

    def __init__(
        self,
        command: Sequence[str],
        returncode: int,
        output_tail: str,
        *,
        what: str = "",
        log_path: Path | None = None,
    ) -> None:
        self.command = list(command)
        self.returncode = returncode
        self.output_tail = output_tail
        self.log_path = log_path
        label = what or Path(self.command[0]).name
        msg = f"{label} failed (exit code {returncode}): {' '.join(self.command)}"
        if output_tail.strip():
            msg += "\n--- last lines of output ---\n" + output_tail.rstrip()
        if log_path is not None:
            msg += f"\n--- full log: {log_path}"
        super().__init__(msg)


class BuildError(KernelkitError):
    """Building one variant failed; names the variant and carries the compiler's error."""

    def __init__(self, variant: str, message: str, *, log_path: Path | None = None,
                 hint: str | None = None) -> None:
        self.variant = variant
        self.log_path = log_path
        text = f"build of variant {variant} failed: {message}"
        if log_path is not None:
            text += f"\n  log: {log_path}"
        super().__init__(text, hint=hint or "the previous build/ tree was left untouched")


#: Whose limitation a refusal to build is: kernelkit's, this machine's, or the project's.
RefusalKind = Literal["unsupported", "machine", "project"]
WHOSE: dict[str, str] = {
    "unsupported": "kernelkit does not support this yet",
    "machine": "this machine lacks what it needs",
    "project": "the project is wrong",
}


class NotBuildableError(KernelkitError):
    """A variant cannot be built, and whose limitation that is (``who``): kernelkit does not
    support it yet (``unsupported``), this machine lacks something (``machine``, the default),
    or the project is wrong (``project``)."""

    def __init__(self, what: str, reason: str, *, hint: str | None = None,
                 who: RefusalKind = "machine") -> None:
        self.what = what
        self.reason = reason
        self.who: RefusalKind = who
        text = (f"{what} is not buildable on this machine: {reason}" if who == "machine"
                else f"{what} is not buildable: {WHOSE[who]}: {reason}")
        super().__init__(text, hint=hint)


class VariantNotInMatrixError(NotBuildableError):
    """A variant name that the kernel's supported matrix does not build on this machine."""

    def __init__(self, variant: str, known: list[str]) -> None:
        super().__init__(variant, "the kernel does not build this variant on this machine",
                         hint="one of: " + ", ".join(known) if known else "no variants at all")


# --- integrity ------------------------------------------------------------------------------


class IntegrityError(KernelkitError):
    """A file's content does not match the digest it was published or locked with."""

    def __init__(self, file: str | Path, expected: str, actual: str, *,
                 hint: str | None = None) -> None:
        self.file = str(file)
        self.expected = expected
        self.actual = actual
        super().__init__(
            f"integrity check failed for {file}: expected {expected}, got {actual}",
            hint=hint or "the file is corrupt or was tampered with; it was not imported",
        )


# --- hub and loader -------------------------------------------------------------------------


class HubError(KernelkitError):
    """The hub could not answer (missing repository, unreachable remote, failed publish)."""


class RevisionNotFoundError(HubError):
    def __init__(self, repo_id: str, revision: str, available: Sequence[str] = ()) -> None:
        self.repo_id = repo_id
        self.revision = revision
        self.available = list(available)
        avail = ", ".join(self.available) if self.available else "none"
        super().__init__(f"revision {revision!r} not found in {repo_id}; available: {avail}")


class VersionNotFoundError(RevisionNotFoundError, ValueError):
    """No ref matches the requested version (``version=N``: no branch ``v<N>``; a specifier: no
    matching release tag); ``available`` lists what there is. Also a ``ValueError``, as upstream
    raises for a missing version."""

    def __init__(self, repo_id: str, requested: str, available: Sequence[str], message: str,
                 hint: str | None = None) -> None:
        self.repo_id = repo_id
        self.revision = requested
        self.available = list(available)
        HubError.__init__(self, message, hint=hint)


class VersionRequestError(KernelkitError, ValueError):
    """The ``revision``/``version`` arguments are missing, both given, or not understood (a
    ``ValueError``, as upstream)."""


@dataclass(frozen=True)
class Rejection:
    variant: str
    reason: str


class VariantNotFoundError(KernelkitError):
    """No variant of a kernel fits this machine; lists every variant with why it was rejected."""

    def __init__(self, repo_id: str, revision: str | None, rejected: Sequence[Rejection],
                 system: str = "") -> None:
        self.repo_id = repo_id
        self.revision = revision
        self.rejected = list(rejected)
        rev = f" (revision {revision})" if revision else ""
        on = f": {system}" if system else ""
        lines = [f"no build variant of {repo_id}{rev} fits this machine{on}"]
        if not self.rejected:
            lines.append("  the repository has no build variants at all")
        lines += [f"  - {r.variant}: {r.reason}" for r in self.rejected]
        super().__init__(
            "\n".join(lines),
            hint="build the kernel for this machine's torch/backend, or use a matching environment",
        )


class TrustError(KernelkitError):
    """A kernel from a publisher the user has not trusted was asked for without consent."""


class OfflineError(KernelkitError):
    """Offline mode is on and what was asked for is not in the cache."""


class LockError(KernelkitError):
    """A lock file is missing, malformed, or does not match what was downloaded."""


# --- layers (kernelize) -----------------------------------------------------------------------


class KernelMappingError(KernelkitError, ValueError):
    """A kernel mapping is malformed, or ``kernelize`` found no usable kernel for a layer while
    fallback to the original forward was off. A ``ValueError`` too, as upstream raises."""


class KernelLayerError(KernelkitError, TypeError):
    """A kernel layer is not a pure drop-in for the layer it replaces (it defines ``__init__``,
    has extra members, or its ``forward`` signature differs). A ``TypeError`` too, as upstream."""


class KernelDependencyError(KernelkitError, ImportError):
    """A kernel needs a Python package that is not installed (``metadata.python-depends``)."""


class UnsupportedDependencyError(KernelkitError, ValueError):
    """A kernel's ``python-depends`` names an id that is not in the curated table."""
