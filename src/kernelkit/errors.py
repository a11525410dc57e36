"""One exception tree for kernelkit, and the exit code of each error.

Every error carries structured fields (for programs) and renders a message that tells a
person what went wrong and what to do next (for people). Only ``kernelkit.cli`` prints them,
and only ``kernelkit.cli.main`` turns them into exit codes, through :func:`exit_code`.

Every exception class kernelkit defines lives here. Errors from other code (``OSError``, JSON and
TOML decoding, ``subprocess``, ``huggingface_hub``) are turned into these where kernelkit meets
that code (reading a file, running a command, calling the Hub), so a caller catches
:class:`KernelkitError` and a user sees one line that names the file, field or variant.

Exit codes (documented for users in README.md, "Exit codes"):

====  ==================  ==============================================================
code  name                raised for
====  ==================  ==============================================================
0     OK                  success
1     ERROR               any other :class:`KernelkitError` or ``OSError``; a check that
                          found errors, or no variant that fits
2     USAGE               :class:`UsageError` (and argparse's own argument errors)
3     NOT_FOUND           a repository, kernel, revision, version, variant or module that is
                          not there
4     INTEGRITY           :class:`IntegrityError` (digest or lock hash mismatch)
5     OFFLINE             :class:`OfflineError`: offline and not in the cache
6     TRUST               :class:`TrustError`: a publisher the user has not trusted;
                          :class:`SignatureError`: a signature the trust policy refuses
7     BUILD               :class:`BuildError`, :class:`NotBuildableError`
8     INVALID_INPUT       a missing or malformed input file: build.toml, metadata.json,
                          kernels.lock, a template, ``LOCAL_KERNELS`` (``InputFileError``:
                          unreadable, irregular, too large); ``UnsafeValueError``
9     COMMAND             :class:`CommandError`: an external command (cmake, git, pip) failed
130   INTERRUPTED         Ctrl-C
141   BROKEN_PIPE         standard output was closed by its reader (``kernelkit ... | head``):
                          nothing more is printed, as a program killed by SIGPIPE
====  ==================  ==============================================================
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal


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
        shown = self.field if self.field.isprintable() else repr(self.field)[1:-1]
        field = f" {shown}:" if self.field else ""
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
        super().__init__(text, hint=hint)


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
    """A variant was asked for that the kernel's build matrix does not build on this machine;
    ``known`` lists the ones it does."""

    def __init__(self, variant: str, known: list[str]) -> None:
        self.variant = variant
        self.known = list(known)
        super().__init__(variant, "the kernel does not build this variant on this machine",
                         hint="one of: " + ", ".join(known) if known else "no variants at all")


class ElfReadError(KernelkitError):
    """The file is not a readable ELF shared library."""


# --- artifacts and scaffolding ----------------------------------------------------------------


class MetadataError(KernelkitError):
    """A variant's ``metadata.json`` is missing or invalid."""

    def __init__(self, path: Path | str, problem: str) -> None:
        self.path = str(path)
        super().__init__(f"{path}: invalid metadata.json: {problem}",
                         hint="rebuild the variant with `kernelkit build`")


class InputFileError(KernelkitError):
    """A user input file (build.toml, pyproject.toml, kernels.lock, metadata.json,
    kernel-status.toml) that cannot be read or parsed: not a regular file, too large, not
    UTF-8, a syntax error, a number beyond Python's digit limit, nested too deeply. Readers of
    one format re-raise it as their own error (``ManifestError``, ``LockError``, ...)."""

    def __init__(self, file: Path | str, reason: str, *, line: int | None = None,
                 hint: str | None = None) -> None:
        self.file = str(file)
        self.reason = reason
        self.line = line
        where = f"{file}:{line}" if line is not None else str(file)
        super().__init__(f"{where}: {reason}", hint=hint)


class UnsafeValueError(KernelkitError, ValueError):
    """A value that cannot be written into a generated file (CMake, Python, TOML) so that it
    is read back as exactly itself; ``check-config`` reports the same values with their line,
    so this is raised only for a manifest that skipped validation."""

    def __init__(self, target: str, value: str, reason: str) -> None:
        self.target = target
        self.value = value
        self.reason = reason
        super().__init__(f"cannot write {value[:100]!r} into a generated {target} file: {reason}",
                         hint="run `kernelkit check-config` and fix the value it reports")
class SymbolsError(MetadataError):
    """A variant's ``symbols.json`` is missing or invalid."""

    def __init__(self, path: Path | str, problem: str) -> None:
        self.path = str(path)
        KernelkitError.__init__(
            self, f"{path}: invalid symbols.json: {problem}",
            hint="rebuild the variant with `kernelkit build` (every build writes symbols.json)")


class TemplateError(KernelkitError):
    """A scaffold template is malformed or uses a placeholder nobody defines."""


class ScaffoldExistsError(KernelkitError):
    """Some of the files ``init`` would write already exist; nothing was written."""

    def __init__(self, dest: Path, existing: Sequence[str]) -> None:
        self.dest = dest
        self.existing = list(existing)
        listing = "\n".join(f"  - {p}" for p in self.existing)
        super().__init__(
            f"{dest}: {len(self.existing)} file(s) already exist and would be overwritten:\n"
            f"{listing}",
            hint="pass --overwrite (overwrite=True) to replace them, or choose another directory",
        )


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


class UnsafeCacheError(IntegrityError):
    """A cache entry someone else could have written (another owner, group/other-writable, a
    symbolic link): refused, nothing imported (``kernelkit.loader.owned``)."""

    def __init__(self, path: str | Path, problem: str) -> None:
        self.path = str(path)
        self.problem = problem
        super().__init__(
            path, "an entry of your own, not writable by group or others", problem,
            hint=f"another user could have planted or changed it, so it is not used; if you "
                 f"trust it, `chmod -R go-w {path}` (your own files), else delete it or use a "
                 "cache of your own (KERNELKIT_CACHE=DIR, or cache_dir=DIR); a shared cache "
                 "must be written by one account only (docs/security.md)")


# --- hub and loader -------------------------------------------------------------------------


class HubError(KernelkitError):
    """The hub could not answer (missing repository, unreachable remote, failed publish)."""


class RepoNotFoundError(HubError):
    """The hub has no repository ``repo_id`` (exit code 3, like a missing revision);
    ``hub`` names the hub as a person reads it."""

    def __init__(self, repo_id: str, hub: str, *, hint: str | None = None) -> None:
        self.repo_id = repo_id
        self.hub = hub
        super().__init__(f"kernel repository {repo_id} not found on {hub}", hint=hint)


class PublishRaceError(HubError):
    """A publish lost a compare-and-swap on a ref: another upload moved it first."""


class TreeClashError(HubError):
    """A commit would make ``path`` both a file and a directory (``build`` and ``build/x``);
    refused before any ref moves, by every hub backend and by ``kernelkit serve``."""

    def __init__(self, path: str, under: str) -> None:
        self.path, self.under = path, under
        super().__init__(
            f"{path!r} would be both a file and a directory ({under!r} is under it) in the new "
            "tree; nothing was committed",
            hint=f"delete the file {path!r} (or the directory {path + '/'!r}) in the same "
                 "commit, or choose another path")


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


class InvalidBackendError(KernelkitError, ValueError):
    """``backend=`` names a backend this machine cannot use (a ``ValueError``, as upstream)."""

    def __init__(self, backend: str, supported: list[str]) -> None:
        self.backend = backend
        self.supported = supported
        super().__init__(
            f"Invalid backend {backend!r}, system supported backends: {', '.join(supported)}",
            hint="pass one of the supported backends, or leave `backend` unset to auto-detect",
        )


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
            hint="use a matching environment, or build the variant here from the kernel's "
                 "published sources: get_kernel(..., build_missing=True), "
                 "KERNELKIT_BUILD_MISSING=1 or `kernelkit download --build-missing`",
        )


class OpNamespaceClashError(KernelkitError):
    """Two different builds would register one torch op namespace in this process (torch
    aborts the interpreter on that); raised before the second one's code runs."""

    def __init__(self, namespace: str, loaded: str, requested: str) -> None:
        self.namespace = namespace
        self.loaded = loaded
        self.requested = requested
        super().__init__(
            f"cannot load {requested}: its op namespace {namespace} is already registered in "
            f"this process by {loaded}, a different build (torch would abort the interpreter)",
            hint="load only one of the two builds per process (the namespace comes from the "
                 "build's sources and settings: two hubs serving one repository, or two builds "
                 "of one source tree, share it), or rebuild one of them from changed sources")


class TrustError(KernelkitError):
    """A kernel from a publisher the user has not trusted was asked for without consent."""


class SignatureError(TrustError):
    """A variant's signature is missing, invalid, by an identity the trust policy does not
    accept for its publisher, or by a revoked key (``kernelkit.signing``); nothing of it was
    imported. ``kernel`` and ``variant`` name it, ``expected`` the identities that would have
    been accepted, ``found`` what was there (a signer identity, ``unsigned``, ``invalid``)."""

    def __init__(self, *, kernel: str, variant: str, reason: str, expected: Sequence[str],
                 found: str, hint: str | None = None) -> None:
        self.kernel = kernel
        self.variant = variant
        self.reason = reason
        self.expected = tuple(expected)
        self.found = found
        want = ", ".join(self.expected) if self.expected else "none (no identity is trusted)"
        super().__init__(f"kernel {kernel} variant {variant}: {reason}; expected a signature by "
                         f"{want}", hint=hint)


class SignatureMaterialError(KernelkitError, ValueError):
    """A signature file or sigstore bundle that cannot be read, or (``invalid_signature``) that
    does not verify; ``identity`` is the signer it claims. ``kernelkit.signing`` reports it as a
    problem of the variant (``SignatureError`` where a policy applies), never on its own."""

    def __init__(self, message: str, *, invalid_signature: bool = False,
                 identity: str | None = None) -> None:
        super().__init__(message)
        self.invalid_signature = invalid_signature
        self.identity = identity


class SigningKeyError(KernelkitError):
    """A signing key, public key or trust policy file cannot be read or used."""


class OfflineError(KernelkitError):
    """Offline mode is on and what was asked for is not in the cache."""


class LockError(KernelkitError):
    """A lock file is missing, malformed, or does not match what was downloaded."""


class KernelNotLockedError(LockError, ValueError):
    """A kernel is not in the lock file (a ``ValueError`` too, as upstream raises)."""


class LockMismatchError(IntegrityError, LockError):
    """The files of a variant do not hash to the value in ``kernels.lock``."""


class KernelNotFoundError(KernelkitError, FileNotFoundError):
    """A local path holds no kernel (a ``FileNotFoundError``, as upstream)."""


class KernelModuleNotFoundError(KernelkitError, FileNotFoundError):
    """A variant directory has no ``__init__.py`` (flat) nor ``<python_name>/__init__.py``."""


class LocalKernelsError(KernelkitError, ValueError):
    """``LOCAL_KERNELS`` is malformed (a ``ValueError``, as upstream)."""


class KernelRefusedError(KernelkitError, RuntimeError):
    """A kernel was found but must not be loaded here; nothing of it was imported. A
    ``RuntimeError`` too, as upstream's validators raise. ``kernel`` and ``variant`` name it."""

    def __init__(self, message: str, *, kernel: str, variant: str,
                 hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.kernel = kernel
        self.variant = variant


class LoaderTooOldError(KernelRefusedError):
    """``metadata.json`` says ``kernels-minver`` = ``required``: newer than the upstream loader
    release this kernelkit implements (``implemented``)."""

    def __init__(self, *, kernel: str, variant: str, required: str, implemented: str) -> None:
        super().__init__(
            f"Kernel '{kernel}' variant '{variant}' requires kernels>={required}, but this "
            f"kernelkit implements the kernels {implemented} loader",
            kernel=kernel, variant=variant,
            hint="upgrade kernelkit (pip install --upgrade kernelkit), or load an older "
                 "version of the kernel")
        self.required = required
        self.implemented = implemented


class UnsupportedArchError(KernelRefusedError):
    """The build's ``backend.archs`` do not cover this device (``check_arch=True``)."""

    def __init__(self, *, kernel: str, variant: str, device: str,
                 archs: Sequence[str]) -> None:
        super().__init__(
            f"Kernel '{kernel}' variant '{variant}' does not support the current device: "
            f"{device} is not supported by the architectures of the build: {', '.join(archs)}",
            kernel=kernel, variant=variant,
            hint="the declared architectures can be incomplete (e.g. a kernel with a Triton "
                 "fallback): pass check_arch=False to skip this check; the kernel may then fail "
                 "or crash at run time on this device")
        self.device = device
        self.archs = tuple(archs)


class KernelIdConflictError(KernelRefusedError):
    """A kernel with the same ``metadata.id`` as an already loaded kernel is a different build
    (its digest differs): ids are unique per build, so one of the two is not what it claims."""

    def __init__(self, *, kernel: str, variant: str, kernel_id: str, loaded: str,
                 differences: Sequence[str]) -> None:
        shown = "\n".join(f"  {d}" for d in differences[:10])
        more = f"\n  ... and {len(differences) - 10} more" if len(differences) > 10 else ""
        super().__init__(
            f"Kernel '{kernel}' at {variant} has the same id '{kernel_id}' as the kernel "
            f"already loaded from {loaded}, but it is a different build:\n{shown}{more}",
            kernel=kernel, variant=variant,
            hint="was the kernel modified without rebuilding it? Load one build per id in a "
                 "process (start a new process to switch builds)")
        self.kernel_id = kernel_id
        self.loaded = loaded
        self.differences = tuple(differences)


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


class KernelDepError(KernelkitError, RuntimeError):
    """``get_kernel_dep`` was called outside a kernel's import, or for a repository the kernel
    does not list in ``kernel-depends`` (a ``RuntimeError``, as upstream)."""


class KernelDepCycleError(KernelDepError, ValueError):
    """Kernel dependencies form a cycle (a ``ValueError`` too, as upstream)."""


# --- command line -------------------------------------------------------------------------------


class UsageError(KernelkitError):
    """A command was called with arguments that cannot work together (exit code 2, as argparse
    uses for the errors it finds itself)."""



class MissingDependencyError(KernelkitError):
    """An optional dependency is not installed; ``extra`` is the ``kernelkit[extra]`` that
    brings it (``None``: not one of kernelkit's extras, e.g. torch)."""

    def __init__(self, module: str, extra: str | None, install: str) -> None:
        self.module = module
        self.extra = extra
        super().__init__(f"this needs the Python package {module!r}, which is not installed",
                         hint=f"install it: {install}")



class MergeError(KernelkitError):
    """Shards that cannot be merged: no variants, a broken digest, or a conflict."""

    def __init__(self, message: str, *, variant: str | None = None,
                 shards: Sequence[Path] = (), hint: str | None = None) -> None:
        self.variant = variant
        self.shards = tuple(shards)
        super().__init__(message, hint=hint)


# --- kernelkit serve --------------------------------------------------------------------------


class ServeApiError(KernelkitError):
    """A request ``kernelkit serve`` refuses: rendered as an HTTP error with ``status``, the
    Hub's ``X-Error-Code`` header (``code``) and extra JSON fields."""

    def __init__(self, status: int, message: str, code: str | None = None,
                 **extra: Any) -> None:
        super().__init__(message)
        self.status, self.code, self.extra = status, code, extra


class CommitBodyError(KernelkitError, ValueError):
    """A commit request body is not what the Hub API expects."""


class RefConflict(HubError):
    """A branch/tag that should not exist does, or a parent commit is stale."""


# --- kernelkit benchmark ---------------------------------------------------------------------


class BenchmarkError(KernelkitError):
    """A kernel's benchmark scripts cannot be run; ``script`` names the file when one is at
    fault. (A case whose result is wrong is a benchmark *result*, not this error.)"""

    def __init__(self, message: str, *, script: Path | None = None,
                 hint: str | None = None) -> None:
        self.script = script
        super().__init__(message, hint=hint)


class BenchmarkNotFoundError(BenchmarkError):
    """The kernel has no ``benchmarks/benchmark*.py`` script (or no case matches)."""


class BenchmarkScriptError(BenchmarkError):
    """A benchmark script fails to import, or defines no benchmark class."""


# --- exit codes ---------------------------------------------------------------------------------


class ExitCode(enum.IntEnum):
    """What the ``kernelkit`` command returns; the table is in the module docstring."""

    OK = 0
    ERROR = 1
    USAGE = 2
    NOT_FOUND = 3
    INTEGRITY = 4
    OFFLINE = 5
    TRUST = 6
    BUILD = 7
    INVALID_INPUT = 8
    COMMAND = 9
    INTERRUPTED = 130
    BROKEN_PIPE = 141


# Most specific first is not needed: :func:`exit_code` walks the error's MRO, so the nearest
# listed base class wins (``LockMismatchError`` is an integrity error before a lock error).
EXIT_CODES: dict[type[KernelkitError], ExitCode] = {
    UsageError: ExitCode.USAGE,
    RevisionNotFoundError: ExitCode.NOT_FOUND,
    RepoNotFoundError: ExitCode.NOT_FOUND,
    VariantNotFoundError: ExitCode.NOT_FOUND,
    KernelNotFoundError: ExitCode.NOT_FOUND,
    KernelModuleNotFoundError: ExitCode.NOT_FOUND,
    KernelNotLockedError: ExitCode.NOT_FOUND,
    IntegrityError: ExitCode.INTEGRITY,
    OfflineError: ExitCode.OFFLINE,
    TrustError: ExitCode.TRUST,
    BuildError: ExitCode.BUILD,
    NotBuildableError: ExitCode.BUILD,
    CommandError: ExitCode.COMMAND,
    ManifestError: ExitCode.INVALID_INPUT,
    MetadataError: ExitCode.INVALID_INPUT,
    InputFileError: ExitCode.INVALID_INPUT,
    UnsafeValueError: ExitCode.INVALID_INPUT,
    LockError: ExitCode.INVALID_INPUT,
    TemplateError: ExitCode.INVALID_INPUT,
    LocalKernelsError: ExitCode.INVALID_INPUT,
    SigningKeyError: ExitCode.INVALID_INPUT,
    BenchmarkNotFoundError: ExitCode.NOT_FOUND,
    BenchmarkScriptError: ExitCode.INVALID_INPUT,
}


def exit_code(exc: BaseException) -> ExitCode:
    """The exit code for ``exc``: its nearest class in :data:`EXIT_CODES`, ``ERROR`` for any
    other kernelkit error or ``OSError``, ``INTERRUPTED`` for Ctrl-C."""
    if isinstance(exc, KeyboardInterrupt):
        return ExitCode.INTERRUPTED
    for cls in type(exc).__mro__:
        code = EXIT_CODES.get(cls)
        if code is not None:
            return code
    return ExitCode.ERROR
