"""A hub on any git remote (``file://``, ssh, https): one remote repository per kernel.

The remote of ``org/name`` is ``<url>/org/name.git``, or ``url`` formatted with ``{org}``,
``{name}`` and ``{repo_id}`` when it holds such placeholders (``ssh://host/{org}/{name}.git``).

Each kernel has a bare mirror under ``cache``, refreshed with ``git fetch --prune`` (at most once
every ``max_age`` seconds for reads of branches and tags; a commit id the mirror already holds
needs no network at all). Reads are served by a ``LocalGitHub`` over the mirrors. Publishing
builds the commit in the mirror, then ``git push --atomic --force-with-lease=<branch>:<old>``:
the remote branch moves only if nobody else moved it meanwhile (compare-and-swap).

Credentials in the URL (``https://user:TOKEN@host/kernels``) never reach a command line, a
message or a log: the URL is stored and shown without them (``util.urls``), and git gets them
from a credential helper configured through ``GIT_CONFIG_*`` environment variables, scoped to
the remote's ``scheme://host``, that prints them from two more environment variables. Other
credential helpers are switched off for that host, so git neither asks nor stores elsewhere.

The network transfer happens in that ``git fetch``, before any variant's size is known; with a
``fetch_observer`` set, the fetch runs with ``--progress`` and each of git's progress lines
("Compressing objects", "Receiving objects" with the bytes so far, ...) reaches the observer
as a :class:`FetchStatus` (the loader shows them as download progress; the hub knows nothing
of how). What a fetch receives is kept as one pack (``fetch.unpackLimit=1``).
"""

from __future__ import annotations

import hashlib
import math
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlparse, urlsplit

from kernelkit.errors import HubError, PublishRaceError, RepoNotFoundError
from kernelkit.hub.gitrepo import DEFAULT_IDENTITY, GitRepo
from kernelkit.hub.hubid import git_identity
from kernelkit.hub.local import LocalGitHub
from kernelkit.hub.names import (
    check_publish,
    check_ref_name,
    check_repo_id,
    is_full_commit_id,
)
from kernelkit.hub.port import FileEntry, Refs
from kernelkit.settings import (
    GIT_CONFIG_COUNT,
    KERNELKIT_GIT_PASSWORD,
    KERNELKIT_GIT_USERNAME,
    process_environ,
)
from kernelkit.util.fs import file_lock
from kernelkit.util.urls import redact_url, split_credentials

if TYPE_CHECKING:
    from kernelkit.hub.admin import RefChange

_FETCH_SPECS = ("+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*")
#: the credential helper (a shell function git runs as ``sh -c '<helper> get'``): prints what the
#: environment holds, only for ``get`` (``store``/``erase`` do nothing)
_HELPER = ('!f() { test "$1" = get || return 0; '
           'test -n "$KERNELKIT_GIT_USERNAME" && '
           'printf "username=%s\\n" "$KERNELKIT_GIT_USERNAME"; '
           'test -n "$KERNELKIT_GIT_PASSWORD" && '
           'printf "password=%s\\n" "$KERNELKIT_GIT_PASSWORD"; '
           'return 0; }; f')


def credential_env(url: str, user: str | None, password: str | None,
                   base: Mapping[str, str]) -> dict[str, str]:
    """Environment variables that give git ``user``/``password`` for ``url``'s host through
    :data:`_HELPER`, appended to any ``GIT_CONFIG_COUNT`` entries in ``base``; ``{}`` when
    there is nothing to give."""
    if user is None and password is None:
        return {}
    parts = urlsplit(url)
    scope = f"{parts.scheme}://{parts.netloc}"
    count = GIT_CONFIG_COUNT.raw(base) or "0"
    n = int(count) if count.isascii() and count.isdigit() and len(count) < 4 else 0
    key = f"credential.{scope}.helper"
    return {f"GIT_CONFIG_KEY_{n}": key, f"GIT_CONFIG_VALUE_{n}": "",  # drop other helpers
            f"GIT_CONFIG_KEY_{n + 1}": key, f"GIT_CONFIG_VALUE_{n + 1}": _HELPER,
            "GIT_CONFIG_COUNT": str(n + 2),
            KERNELKIT_GIT_USERNAME.name: user or "", KERNELKIT_GIT_PASSWORD.name: password or ""}


@dataclass(frozen=True)
class FetchStatus:
    """How far one ``git fetch`` of a kernel repository has come, read from git's own progress
    lines (``remote: Compressing objects:  66% (2/3)``, ``Receiving objects:  45% (9/20),
    12.00 MiB | 4.00 MiB/s``). git learns the pack's size only as it arrives, so there is no byte
    total: ``phase`` (git's words, ``remote:`` dropped) and its ``done``/``total`` count say how
    far it is. ``received_bytes`` never decreases within one fetch; the last status has
    ``finished=True`` (``failed=True`` when git failed)."""

    repo_id: str
    url: str
    phase: str
    done: int
    total: int
    received_bytes: int
    elapsed_s: float
    finished: bool = False
    failed: bool = False


FetchObserver = Callable[[FetchStatus], None]

_PROGRESS = re.compile(r"^(?:remote: )?([A-Z][a-z]+ (?:objects|deltas)):\s+\d+% \((\d+)/(\d+)\)"
                       r"(?:, ([0-9.]+) (bytes|KiB|MiB|GiB|TiB))?")
_UNIT = {"bytes": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}
_QUIET_LINE = re.compile(r"^(?:remote: )?(?:Enumerating objects:|Total )")


def parse_progress(line: str) -> tuple[str, int, int, int | None] | None:
    """``(phase, done, total, bytes so far or None)`` from one of git's progress lines
    (``Receiving objects:  45% (9/20), 12.00 MiB | 4.00 MiB/s``); ``None`` for any other."""
    found = _PROGRESS.match(line.strip())
    if found is None:
        return None
    phase, done, total, amount, unit = found.groups()
    received = int(float(amount) * _UNIT[unit]) if amount else None
    return phase, int(done), int(total), received


class _FetchTracker:
    """Turns git's progress lines of one fetch into :class:`FetchStatus` reports."""

    def __init__(self, repo_id: str, url: str, observer: FetchObserver) -> None:
        self.repo_id, self.url, self.observer = repo_id, url, observer
        self.start = time.monotonic()
        self.phase, self.done, self.total, self.received = "", 0, 0, 0
        self.other: list[str] = []  # what git said besides progress (for an error message)

    def line(self, text: str) -> None:
        parsed = parse_progress(text)
        if parsed is None:
            if text.strip() and not _QUIET_LINE.match(text):
                self.other.append(text)
            return
        self.phase, self.done, self.total, received = parsed
        if received is not None:
            self.received = max(self.received, received)
        self._report(finished=False, failed=False)

    def end(self, *, failed: bool) -> None:
        """The closing report, only for a fetch that showed progress (an up-to-date mirror
        says nothing)."""
        if self.phase:
            self._report(finished=True, failed=failed)

    def _report(self, *, finished: bool, failed: bool) -> None:
        self.observer(FetchStatus(self.repo_id, self.url, self.phase, self.done, self.total,
                                  self.received, time.monotonic() - self.start, finished,
                                  failed))

# what git says when the remote has no such repository (not: unreachable, refused)
_MISSING_REPO = re.compile(r"repository '[^']*' not found|does not appear to be a git "
                           r"repository|HTTP 404|: 404\b", re.I)


class GitRemoteHub:
    """A hub on git remotes, read through local bare mirrors (see module docstring)."""

    def __init__(self, url: str, cache: Path, *, max_age: float = 5.0,
                 identity: tuple[str, str] = DEFAULT_IDENTITY) -> None:
        url = url[len("git+"):] if url.startswith("git+") else url
        #: the URL without credentials (the only form stored, shown or passed to git)
        self.url, user, password = split_credentials(url)
        self._credentials = (user, password)
        _check_placeholders(self.url)
        self.cache = Path(cache)
        self.max_age = max_age
        slug = hashlib.sha256(self.url.encode()).hexdigest()[:16]
        self.mirror = LocalGitHub(self.cache / "git-mirrors" / slug, identity=identity)
        self._fetched: dict[str, float] = {}
        self._known: set[tuple[str, str]] = set()
        #: called with each :class:`FetchStatus` of a fetch from the remote (``None``: git runs
        #: with ``--quiet``); the loader sets it to show download progress
        self.fetch_observer: FetchObserver | None = None

    def __repr__(self) -> str:
        return f"GitRemoteHub({redact_url(self.url)!r})"

    def __str__(self) -> str:
        """What a person reads (and passes to ``--hub``): ``git+<url>``, credentials redacted."""
        return f"git+{redact_url(self.url)}"

    @property
    def hub_identity(self) -> str:
        """``git:<url>`` (see ``kernelkit.hub.hubid``); the mirrors do not change it."""
        return git_identity(self.url)

    @property
    def git_calls(self) -> int:
        return self.mirror.git_calls

    def _auth_env(self) -> dict[str, str]:
        return credential_env(self.url, *self._credentials, process_environ())

    def remote_url(self, repo_id: str) -> str:
        org, name = check_repo_id(repo_id)
        if "{" in self.url:
            return self.url.format(org=org, name=name, repo_id=repo_id)
        return f"{self.url.rstrip('/')}/{org}/{name}.git"

    # --- the mirror ------------------------------------------------------------------------

    def _local_remote(self, repo_id: str) -> GitRepo | None:
        """The remote as a local path when it is one (``file://`` or a plain path)."""
        url = self.remote_url(repo_id)
        if url.startswith("file://"):
            return GitRepo(Path(unquote(urlparse(url).path)))
        return GitRepo(Path(url)) if "://" not in url and ":" not in url.split("/")[0] else None

    def refresh(self, repo_id: str, *, force: bool = False) -> GitRepo:
        """Fetch the remote into the mirror unless that was done less than ``max_age`` ago."""
        repo = self.mirror.repo(repo_id)
        if not force and time.monotonic() - self._fetched.get(repo_id, -math.inf) < self.max_age:
            return repo
        repo.init()
        url = self.remote_url(repo_id)
        with file_lock(repo.git_dir.parent / f".{repo.git_dir.name}.lock"):
            failure = self._fetch(repo, repo_id, url)
        if failure is not None:
            if self._repo_missing(repo_id, failure):
                raise RepoNotFoundError(
                    repo_id, redact_url(url),
                    hint="check the id and the hub URL; publish it with `kernelkit upload`")
            raise HubError(
                f"cannot read kernel repository {repo_id} from {url}:\n{redact_url(failure)}",
                hint="check the URL and your access; publish it with `kernelkit upload`",
            )
        self._fetched[repo_id] = time.monotonic()
        return repo

    def _repo_missing(self, repo_id: str, failure: str) -> bool:
        """Whether a failed fetch means the hub has no such repository (not: the hub itself
        is missing or unreachable): a local remote whose hub directory exists without it, or
        a server that says so."""
        local = self._local_remote(repo_id)
        if local is not None:
            return local.git_dir.parent.parent.is_dir() and not local.exists()
        return _MISSING_REPO.search(failure) is not None

    def _fetch(self, repo: GitRepo, repo_id: str, url: str) -> str | None:
        """One ``git fetch`` of every branch and tag into the mirror; what git said if it
        failed, else ``None``."""
        # what arrives stays one pack (git would otherwise re-compress every object of fewer
        # than 100 into a loose file: 1.63 -> 1.01 s for 25 MB, benchmarks/bench_git_fetch.py),
        # and a kept pack's index-pack reports "Receiving objects" with the bytes so far
        args = ("--prune", "--no-write-fetch-head", url, *_FETCH_SPECS)
        keep = ("-c", "fetch.unpackLimit=1")
        env = self._auth_env()
        if self.fetch_observer is None:
            proc = repo.git(*keep, "fetch", "--quiet", *args, check=False, env=env)
            return proc.stderr.decode(errors="replace").strip() if proc.returncode else None
        tracker = _FetchTracker(repo_id, url, self.fetch_observer)
        returncode = repo.git_lines(*keep, "fetch", "--progress", *args,
                                    on_line=tracker.line, env=env).returncode
        tracker.end(failed=returncode != 0)
        return "\n".join(tracker.other).strip() if returncode else None

    def _with_commit(self, repo_id: str, commit: str) -> None:
        """Make sure the mirror holds ``commit`` (fetching once if it does not)."""
        if (repo_id, commit) in self._known:
            return
        repo = self.mirror.repo(repo_id)
        have = repo.exists() and is_full_commit_id(commit) and repo.lookup(
            [f"{commit}^{{commit}}"])[0] is not None
        if not have:
            self.refresh(repo_id, force=True)
        self._known.add((repo_id, commit))

    # --- reading ---------------------------------------------------------------------------

    def repo_exists(self, repo_id: str) -> bool:
        try:
            self.refresh(repo_id)
        except HubError:
            return False
        return True

    def list_refs(self, repo_id: str) -> Refs:
        self.refresh(repo_id)
        return self.mirror.list_refs(repo_id)

    def resolve(self, repo_id: str, revision: str) -> str:
        if is_full_commit_id(revision) and self.mirror.repo_exists(repo_id):
            found = self.mirror.repo(repo_id).lookup([f"{revision}^{{commit}}"])[0]
            if found is not None:
                return found[0]
        self.refresh(repo_id)
        return self.mirror.resolve(repo_id, revision)

    def list_files(self, repo_id: str, commit: str, path: str = "") -> list[FileEntry]:
        self._with_commit(repo_id, commit)
        return self.mirror.list_files(repo_id, commit, path)

    def list_dirs(self, repo_id: str, commit: str, path: str = "build") -> list[str]:
        self._with_commit(repo_id, commit)
        return self.mirror.list_dirs(repo_id, commit, path)

    def read_file(self, repo_id: str, commit: str, path: str) -> bytes | None:
        self._with_commit(repo_id, commit)
        return self.mirror.read_file(repo_id, commit, path)

    def fetch(self, repo_id: str, commit: str, paths: list[str], dest: Path) -> None:
        self._with_commit(repo_id, commit)
        self.mirror.fetch(repo_id, commit, paths, dest)

    # --- writing ---------------------------------------------------------------------------

    def _ensure_remote(self, repo_id: str) -> None:
        """Create a missing *local* remote repository (``file://``); others must exist.

        The hub directory (the parent of ``<org>/``) is created only inside an existing
        directory other than the file-system root: a typo in the URL must not create
        directories anywhere, least of all at ``/``."""
        local = self._local_remote(repo_id)
        if local is None or local.exists():
            return
        root = local.git_dir.parent.parent
        parent = root.parent
        if not root.is_absolute() or parent == Path(parent.anchor) or not parent.is_dir():
            raise HubError(
                f"refusing to create the hub directory {root} for {self.remote_url(repo_id)}: "
                f"{parent} does not exist or is the file-system root",
                hint="fix the hub URL, or create the hub directory first (mkdir -p DIR)",
            )
        local.init()

    def publish_tagged(self, repo_id: str, branch: str, files: Mapping[str, Path], *, tag: str,
                       delete_prefixes: tuple[str, ...] = (),
                       message: str = "Upload with kernelkit") -> str:
        """:meth:`publish` and :meth:`tag` in one atomic push: both refs move, or neither."""
        check_publish(branch, files)
        check_ref_name(tag, "tag")
        self._ensure_remote(repo_id)
        repo = self.refresh(repo_id, force=True)
        old, new = self.mirror.build_commit(repo, branch, files, delete_prefixes, message)
        ref = f"refs/heads/{branch}"
        specs = [f"{new}:refs/tags/{tag}"] + ([f"{new}:{ref}"] if new != old else [])
        self._push(repo_id, repo, specs, f"--force-with-lease={ref}:{old or ''}",
                   what=f"branch {branch} with tag {tag}",
                   hint="another upload moved the branch first, or the tag exists already "
                        "(tags never move): run the upload again or bump the tag")
        repo.update_ref(ref, new, old, message)  # keep the mirror in step (best effort)
        repo.update_ref(f"refs/tags/{tag}", new, None, f"tag {tag}")
        return new

    def publish(self, repo_id: str, branch: str, files: Mapping[str, Path], *,
                delete_prefixes: tuple[str, ...] = (),
                message: str = "Upload with kernelkit") -> str:
        check_publish(branch, files)
        self._ensure_remote(repo_id)
        repo = self.refresh(repo_id, force=True)
        old, new = self.mirror.build_commit(repo, branch, files, delete_prefixes, message)
        if new == old:
            return new
        ref = f"refs/heads/{branch}"
        self._push(repo_id, repo, [f"{new}:{ref}"], f"--force-with-lease={ref}:{old or ''}",
                   what=f"branch {branch}")
        repo.update_ref(ref, new, old, message)  # keep the mirror in step (best effort)
        return new

    def tag(self, repo_id: str, tag: str, commit: str) -> None:
        check_ref_name(tag, "tag")
        target = self.resolve(repo_id, commit)
        repo = self.mirror.repo(repo_id)
        self._push(repo_id, repo, [f"{target}:refs/tags/{tag}"], what=f"tag {tag}",
                   hint="tags never move: publish a new version tag instead")
        repo.update_ref(f"refs/tags/{tag}", target, None, f"tag {tag}")

    def update_refs(self, repo_id: str, changes: Sequence[RefChange], *,
                    message: str = "kernelkit") -> None:
        """Apply ``changes`` (``hub/admin.py``) in one ``git push --atomic`` with a lease on
        each ref's ``old`` commit: all of them or none."""
        repo = self.refresh(repo_id, force=True)
        specs, leases = [], []
        for c in changes:
            leases.append(f"--force-with-lease={c.ref}:{c.old or ''}")
            specs.append(f":{c.ref}" if c.new is None else f"+{c.new}:{c.ref}")
        self._push(repo_id, repo, specs, *leases, what="the ref changes",
                   hint="another process changed the refs first; nothing was changed")
        for c in changes:  # keep the mirror in step (best effort)
            if c.new is None:
                repo.git("update-ref", "-d", c.ref, check=False)
            else:
                repo.git("update-ref", c.ref, c.new, check=False)
        del message  # a push carries no message

    def _push(self, repo_id: str, repo: GitRepo, refspecs: list[str], *options: str, what: str,
              hint: str = "another upload may have finished first; run the upload again") -> None:
        url = self.remote_url(repo_id)
        proc = repo.git("push", "--quiet", "--atomic", "--porcelain", *options, url, *refspecs,
                        check=False, env=self._auth_env())
        if proc.returncode != 0:
            out = redact_url((proc.stdout + proc.stderr).decode(errors="replace").strip())
            raced = any(k in out for k in ("stale info", "fetch first", "non-fast-forward",
                                           "cannot lock ref"))
            cls = PublishRaceError if raced else HubError
            raise cls(f"push of {what} of {repo_id} to {url} was rejected:\n{out}", hint=hint)


def _check_placeholders(url: str) -> None:
    """Only ``{org}``, ``{name}`` and ``{repo_id}`` may appear in braces (``HubError``)."""
    import string

    try:
        fields = [f for _, f, spec, conv in string.Formatter().parse(url) if f is not None]
    except ValueError as exc:
        raise HubError(f"invalid hub URL {redact_url(url)!r}: {exc}",
                       hint="braces may only hold {org}, {name} or {repo_id}") from None
    bad = [f for f in fields if f not in ("org", "name", "repo_id")]
    if bad:
        raise HubError(f"invalid hub URL {redact_url(url)!r}: unknown placeholder {{{bad[0]}}}",
                       hint="braces may only hold {org}, {name} or {repo_id}")
