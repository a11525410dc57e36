"""Removing a version and moving a release tag on a hub (``kernelkit hub rm-version`` and
``kernelkit hub retag``): plan, then act, with the atomicity of ``upload``.

A plan is a list of :class:`RefChange` values: each ref with the commit it must still point to
(``old``) and the one it gets (``new``; ``None`` deletes it). Every backend applies a plan as
compare-and-swap on each ``old``: the local hub in one ``git update-ref --stdin`` transaction,
a git remote in one ``git push --atomic`` with a lease per ref, both all or nothing. The
Hugging Face Hub API has no transaction over refs: the refs are checked against the plan first,
then changed one call at a time, tags before the branch (a version whose tags are gone but
whose branch is left still loads with ``version=N``; running the command again finishes it),
and a tag that is moved is deleted and created again (a failed creation puts the old one back).

``main`` is never removed: every repository keeps its card there (``publish/upload.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kernelkit.errors import HubError, RevisionNotFoundError, UsageError
from kernelkit.hub.names import SEMVER_TAG, VERSION_BRANCH, check_ref_name, check_repo_id
from kernelkit.hub.port import Hub


@dataclass(frozen=True)
class RefChange:
    """``ref`` (``refs/heads/v1``, ``refs/tags/v1.2.0``) from commit ``old`` (``None``: must
    not exist) to ``new`` (``None``: delete)."""

    ref: str
    old: str | None
    new: str | None

    @property
    def kind(self) -> str:
        return "branch" if self.ref.startswith("refs/heads/") else "tag"

    @property
    def name(self) -> str:
        return self.ref.split("/", 2)[2]

    def to_json(self) -> dict[str, str | None]:
        return {"kind": self.kind, "name": self.name, "old": self.old, "new": self.new}


def plan_rm_version(hub: Hub, repo_id: str, version: str) -> list[RefChange]:
    """What removing ``version`` deletes: ``1`` or ``v1``: the branch ``v1`` and every release
    tag ``v1.x.y``; ``v1.2.0``: that tag only. ``RevisionNotFoundError`` when none exists."""
    check_repo_id(repo_id)
    refs = hub.list_refs(repo_id)
    text = version if version.startswith("v") else f"v{version}"
    major_branch = VERSION_BRANCH.match(text)
    if SEMVER_TAG.match(text):
        tags = {text: refs.tags[text]} if text in refs.tags else {}
        branch = None
    elif major_branch is not None:
        major = major_branch.group(1)
        tags = {t: c for t, c in refs.tags.items()
                if (m := SEMVER_TAG.match(t)) and m.group(1) == major}
        branch = text if text in refs.branches else None
    else:
        raise UsageError(f"{version!r} is not a version",
                         hint="pass a major version (1 or v1: the branch and its release tags) "
                              "or one release tag (v1.2.0)")
    changes = [RefChange(f"refs/tags/{t}", c, None) for t, c in sorted(tags.items())]
    if branch is not None:
        changes.append(RefChange(f"refs/heads/{branch}", refs.branches[branch], None))
    if not changes:
        raise RevisionNotFoundError(repo_id, text, [*sorted(refs.branches), *sorted(refs.tags)])
    return changes


def plan_retag(hub: Hub, repo_id: str, tag: str, revision: str) -> list[RefChange]:
    """Point the release tag ``tag`` at ``revision`` (a branch, tag or commit): created when
    missing, moved when it names another commit, nothing when it already names that one."""
    check_repo_id(repo_id)
    check_ref_name(tag, "tag")
    m = SEMVER_TAG.match(tag)
    if m is None:
        raise UsageError(f"{tag!r} is not a release tag",
                         hint="release tags are v<major>.<minor>.<patch>, e.g. v1.2.0")
    new = hub.resolve(repo_id, revision)
    refs = hub.list_refs(repo_id)
    branch = refs.branches.get(f"v{m.group(1)}")
    if branch is None:
        raise HubError(f"{repo_id} has no branch v{m.group(1)} for the tag {tag}",
                       hint=f"upload version {m.group(1)} first, or choose a tag of an existing "
                            "version")
    old = refs.tags.get(tag)
    return [] if old == new else [RefChange(f"refs/tags/{tag}", old, new)]


def apply_changes(hub: Hub, repo_id: str, changes: Sequence[RefChange], message: str) -> None:
    """Carry out a plan on ``hub`` (module docstring: all or nothing where the hub can)."""
    if not changes:
        return
    if any(c.ref == "refs/heads/main" for c in changes):
        raise HubError("main holds the repository's card and is never removed")
    update = getattr(hub, "update_refs", None)
    if update is None:
        raise HubError(f"the hub {hub} cannot change refs",
                       hint="use a hub directory, a git remote or the Hub API")
    update(repo_id, list(changes), message=message)
