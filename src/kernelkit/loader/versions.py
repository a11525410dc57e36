"""Version selection: ``revision=`` / ``version=`` -> one ref and its commit (pure).

Rules (upstream-loader.md §2.5, plus the pre-0.14 specifier form):

* ``revision``: a branch, a tag, a full commit id or a unique prefix of a known commit id.
* ``version=<int>``: the branch ``v<int>`` (upstream's messages, numeric sort).
* ``version="<specifier>"`` (``">=1.1,<2"``, ``"~=1.2"``, ``"==1.2.*"``): the newest tag
  ``v<major>.<minor>.<patch>`` inside the specifier; pre-releases only when the specifier names
  one. A string of digits (``"2"``) means the major version 2, as the integer does.

Every function takes a ``Refs`` value (from the hub) or the cache's ``Listing`` of one and never
talks to the hub itself. ``packaging`` is imported only for specifiers and release tags: a
``version=<int>`` lookup stays cheap.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, NamedTuple

from kernelkit.errors import RevisionNotFoundError, VersionNotFoundError, VersionRequestError

if TYPE_CHECKING:  # packaging and the hub port cost ~5 ms to import: only specifiers need them
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    from kernelkit.hub.port import Refs
    from kernelkit.loader.cache import Listing

    AnyRefs = Refs | Listing  # a hub's listing or the cache's record of one

VersionRequest = int | str

__all__ = [
    "Selected", "VersionNotFoundError", "VersionRequest", "VersionRequestError", "check_request",
    "describe_refs", "major_versions", "parse_version_request", "release_tags", "select_major",
    "select_ref", "select_revision", "select_specifier",
]

_MAJOR_RE = re.compile(r"^v(\d+)\Z")
_SEMVER = r"^v(\d+\.\d+\.\d+(?:[-.]?(?:a|b|rc|alpha|beta|pre|dev)\.?\d*)?)\Z"
_HEX = r"^[0-9a-f]{4,64}\Z"


@functools.cache
def _regex(pattern: str) -> re.Pattern[str]:
    """Compiled on first use: a ``version=<int>`` lookup needs neither of the patterns above."""
    return re.compile(pattern)
_MAX_REQUEST = 200  # characters of a version request


class Selected(NamedTuple):
    """The outcome: the ref that was asked for (``None`` for a commit id) and its commit (a
    NamedTuple: cheaper to define than a dataclass on the warm version lookup)."""

    ref: str | None
    commit: str
    newest_major: int | None = None  # set when a major version older than the newest was chosen


def major_versions(refs: AnyRefs) -> dict[int, str]:
    """``{N: commit}`` for every branch named ``v<N>``."""
    out: dict[int, str] = {}
    for name, commit in refs.branches.items():
        m = _MAJOR_RE.match(name)
        if m:
            out[int(m.group(1))] = commit
    return out


def release_tags(refs: AnyRefs) -> dict[Version, tuple[str, str]]:
    """``{Version: (tag, commit)}`` for every tag ``v<major>.<minor>.<patch>[pre]``."""
    from packaging.version import InvalidVersion, Version

    out: dict[Version, tuple[str, str]] = {}
    for name, commit in refs.tags.items():
        if not _regex(_SEMVER).match(name):
            continue
        try:
            out[Version(name[1:])] = (name, commit)
        except InvalidVersion:
            continue
    return out


def parse_version_request(version: VersionRequest) -> int | SpecifierSet:
    """An ``int`` (or digits) is a major version; any other string must be a PEP 440 specifier."""
    if isinstance(version, bool):
        raise VersionRequestError(f"version must be an int or a specifier string, not {version!r}")
    if isinstance(version, int) and 0 <= version < 10**9:
        return version
    # a control character ("1\n") is no part of any version: refused, not stripped away
    if isinstance(version, str) and version.isprintable() \
            and 0 < len(version.strip()) <= _MAX_REQUEST:
        # "" would be SpecifierSet("") (any version); 5000 digits would overflow int()
        text = version.strip()
        if text.isascii() and text.isdigit():
            return int(text)
        if _MAJOR_RE.match(text):
            return int(text[1:])
        from packaging.specifiers import InvalidSpecifier, SpecifierSet

        try:
            return SpecifierSet(text)
        except InvalidSpecifier:
            pass
    shown = repr(version)[:60] if isinstance(version, str) else f"<{type(version).__name__}>"
    raise VersionRequestError(
        f"version {shown} is neither a major version (an int such as 1) nor a version "
        "specifier (such as '>=1.1,<2' or '~=1.2')",
        hint="pass version=1 for the branch v1, or a specifier matched against tags v<x.y.z>",
    )


def select_major(refs: AnyRefs, repo_id: str, major: int) -> Selected:
    versions = major_versions(refs)
    commit = versions.get(major)
    if commit is None:
        avail = ", ".join(str(v) for v in sorted(versions)) or "none"
        raise VersionNotFoundError(
            repo_id, f"v{major}", [f"v{v}" for v in sorted(versions)],
            f"Version {major} not found, available versions: {avail}",
            hint=f"{repo_id} has no branch v{major}; pick one of the versions listed",
        )
    newest = max(versions)
    return Selected(f"v{major}", commit, newest if newest > major else None)


def select_specifier(refs: AnyRefs, repo_id: str, spec: SpecifierSet) -> Selected:
    tags = release_tags(refs)
    matching = list(spec.filter(sorted(tags), prereleases=bool(spec.prereleases)))
    if not matching:
        avail = [tags[v][0] for v in sorted(tags)]
        listed = ", ".join(avail) if avail else "none"
        raise VersionNotFoundError(
            repo_id, str(spec), avail,
            f"No release of {repo_id} matches version specifier '{spec}'; "
            f"available release tags: {listed}",
            hint="releases are tags named v<major>.<minor>.<patch>; widen the specifier "
            "or tag a release",
        )
    tag, commit = tags[max(matching)]
    return Selected(tag, commit)


def select_revision(refs: AnyRefs, repo_id: str, revision: str,
                    known_commits: tuple[str, ...] = ()) -> Selected:
    """A branch, tag, full commit id or unique commit prefix, looked up in ``refs``."""
    if revision in refs.branches:
        return Selected(revision, refs.branches[revision])
    if revision in refs.tags:
        return Selected(revision, refs.tags[revision])
    rev = revision.lower()
    if _regex(_HEX).match(rev):
        commits = set(refs.branches.values()) | set(refs.tags.values()) | set(known_commits)
        hits = sorted(c for c in commits if c.startswith(rev))
        if len(hits) == 1:
            return Selected(None, hits[0])
        if len(rev) in (40, 64) and not hits:
            return Selected(None, rev)
    available = sorted(refs.branches) + sorted(refs.tags)
    raise RevisionNotFoundError(repo_id, revision, available)


def select_ref(refs: AnyRefs, repo_id: str, *, revision: str | None = None,
           version: VersionRequest | None = None,
           known_commits: tuple[str, ...] = ()) -> Selected:
    """Exactly one of ``revision``/``version``; upstream's messages when that is not so."""
    check_request(revision, version)
    if revision is not None:
        return select_revision(refs, repo_id, revision, known_commits)
    assert version is not None
    parsed = parse_version_request(version)
    if isinstance(parsed, int):
        return select_major(refs, repo_id, parsed)
    return select_specifier(refs, repo_id, parsed)


def check_request(revision: str | None, version: VersionRequest | None) -> None:
    if revision is not None and version is not None:
        raise VersionRequestError("Only one of `revision` or `version` must be specified.")
    if revision is None and version is None:
        raise VersionRequestError(
            "A kernel version or revision must be specified.",
            hint="pass version=<major> (the branch v<major>, e.g. version=1), a version "
                 "specifier over release tags (e.g. version='>=1.1,<2'), or revision=<branch, "
                 "tag or commit>; loading without either was removed upstream in kernels 0.15",
        )


def describe_refs(refs: AnyRefs) -> list[tuple[str, str, str]]:
    """``(kind, name, commit)`` rows for display: major branches (numeric), release tags
    (by version), then every other branch and tag (by name)."""
    rows: list[tuple[str, str, str]] = []
    majors = major_versions(refs)
    rows += [("version", f"v{n}", majors[n]) for n in sorted(majors)]
    tags = release_tags(refs)
    rows += [("release", tags[v][0], tags[v][1]) for v in sorted(tags)]
    seen = {r[1] for r in rows}
    rows += [("branch", b, c) for b, c in sorted(refs.branches.items()) if b not in seen]
    rows += [("tag", t, c) for t, c in sorted(refs.tags.items()) if t not in seen]
    return rows
