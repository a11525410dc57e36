"""The Hugging Face Hub as a hub backend, through ``huggingface_hub.HfApi`` (repo type
``kernel``, Hub API paths ``/api/kernels/...``, the calls upstream-loader.md §2.6 lists).

``huggingface_hub`` is imported inside methods only (``import kernelkit`` stays light).

Publishing is one ``create_commit`` with ``parent_commit`` set to the branch head read
beforehand, so the Hub rejects it if the branch moved meanwhile (compare-and-swap) and readers
see the old commit or the new one. Unlike upstream ``kernel-builder``, which commits in batches
of 1000 operations, kernelkit sends all operations in one commit (huggingface_hub uploads the
file contents in chunks before the commit itself). Files whose git blob id already matches the
remote are not re-sent; no operation at all means no commit.

A branch and its release tag cannot move together: the Hub API has no transaction over two
refs (a commit moves one branch; a tag is a second call). So :meth:`HuggingFaceHub.
publish_tagged` records the tag a commit is meant to get in the commit itself (a
``Kernelkit-Tag: v1.2.0`` line in its description), and every later upload to the repository
first creates any such tag that is missing on a version branch's head (:meth:`repair_tags`).
A crash between the commit and the tag leaves the branch one tag short until then, never a
tag on the wrong commit.
"""

from __future__ import annotations

import hashlib
import importlib
import re
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kernelkit.errors import (
    HubError,
    OfflineError,
    PublishRaceError,
    RepoNotFoundError,
    RevisionNotFoundError,
)
from kernelkit.hub.hubid import hf_identity
from kernelkit.hub.names import (
    SEMVER_TAG,
    VERSION_BRANCH,
    check_publish,
    check_ref_name,
    check_repo_id,
    check_repo_path,
    normalize_dir,
    under_prefixes as _under,
)
from kernelkit.hub.port import FileEntry, Refs
from kernelkit.settings import HF_ENDPOINT, process_environ
from kernelkit.util.urls import redact_url

if TYPE_CHECKING:
    from kernelkit.hub.admin import RefChange

REPO_TYPE = "kernel"
TAG_TRAILER = "Kernelkit-Tag"
_TRAILER = re.compile(rf"^{TAG_TRAILER}: (\S+)[ \t]*$", re.M)


def git_blob_id(path: Path) -> str:
    h = hashlib.sha1(b"blob %d\0" % path.stat().st_size)
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


class HuggingFaceHub:
    """The Hugging Face Hub (or anything speaking its API at ``endpoint``)."""

    def __init__(self, token: str | None = None, endpoint: str | None = None, *,
                 private: bool = False) -> None:
        self.token = token
        self.endpoint = endpoint
        self.private = private  # visibility of repositories this hub object creates
        self._api_obj: Any = None
        self._trees: dict[tuple[str, str, str], list[FileEntry]] = {}

    def __repr__(self) -> str:
        return f"HuggingFaceHub({redact_url(self.endpoint or 'https://huggingface.co')!r})"

    def __str__(self) -> str:
        """What a person reads: the Hub API endpoint (``--hub hf`` with ``HF_ENDPOINT``)."""
        return redact_url(self.endpoint or HF_ENDPOINT.read(process_environ())
                          or "https://huggingface.co")

    def describe(self) -> str:
        return f"the Hugging Face Hub API at {self}"

    @property
    def hub_identity(self) -> str:
        """``hf:<endpoint>`` (see ``kernelkit.hub.hubid``); with no endpoint given, the one the
        client uses: ``HF_ENDPOINT`` of the process, else ``https://huggingface.co``."""
        return hf_identity(self.endpoint or HF_ENDPOINT.read(process_environ()))

    @property
    def api(self) -> Any:
        if self._api_obj is None:
            from huggingface_hub import HfApi

            from kernelkit._version import __version__

            self._api_obj = HfApi(endpoint=self.endpoint, token=self.token,
                                  library_name="kernelkit", library_version=__version__)
        return self._api_obj

    @contextmanager
    def _errors(self, repo_id: str, revision: str | None = None) -> Iterator[None]:
        """Translate huggingface_hub's errors into kernelkit's."""
        from huggingface_hub import errors as hf

        try:
            yield
        except hf.RepositoryNotFoundError:
            raise RepoNotFoundError(repo_id, self.describe(),
                                    hint="check the id and your token (HF_TOKEN); publish it with "
                                     "`kernelkit upload --hub hf`") from None
        except hf.RevisionNotFoundError:
            raise RevisionNotFoundError(repo_id, revision or "?", self._available(repo_id)) \
                from None
        except hf.HfHubHTTPError as exc:
            status = exc.response.status_code if exc.response is not None else None
            if status in (401, 403):
                raise HubError(f"{self.describe()} refused the request for {repo_id} ({status}): "
                               f"{exc.server_message or exc}",
                               hint="set HF_TOKEN to a token that may write to this hub"
                               ) from None
            raise HubError(f"{self.describe()} failed for {repo_id}: {exc}",
                           hint="retry later, or check HF_ENDPOINT/HF_TOKEN") from None
        except hf.OfflineModeIsEnabled:
            raise OfflineError(f"{self.describe()} cannot be reached for {repo_id}: offline "
                               "mode is on (HF_HUB_OFFLINE)",
                               hint="unset HF_HUB_OFFLINE, or load from the cache") from None
        except _network_errors() as exc:
            raise HubError(f"cannot reach {self.describe()} for {repo_id}: {exc}",
                           hint="check the network connection and HF_ENDPOINT") from None

    def _available(self, repo_id: str) -> list[str]:
        try:
            refs = self.list_refs(repo_id)
        except HubError:
            return []
        return [*sorted(refs.branches), *sorted(refs.tags)]

    # --- reading ---------------------------------------------------------------------------

    def repo_exists(self, repo_id: str) -> bool:
        check_repo_id(repo_id)
        with self._errors(repo_id):
            return bool(self.api.repo_exists(repo_id, repo_type=REPO_TYPE))

    def list_refs(self, repo_id: str) -> Refs:
        check_repo_id(repo_id)
        with self._errors(repo_id):
            refs = self.api.list_repo_refs(repo_id, repo_type=REPO_TYPE)
        return Refs(branches={b.name: b.target_commit for b in refs.branches},
                    tags={t.name: t.target_commit for t in refs.tags})

    def resolve(self, repo_id: str, revision: str) -> str:
        check_repo_id(repo_id)
        with self._errors(repo_id, revision):
            sha = self.api.repo_info(repo_id, repo_type=REPO_TYPE, revision=revision).sha
        if not sha:
            raise RevisionNotFoundError(repo_id, revision, self._available(repo_id))
        return str(sha)

    def _tree(self, repo_id: str, commit: str, path: str, recursive: bool) -> list[Any]:
        from huggingface_hub import errors as hf

        with self._errors(repo_id, commit):
            try:
                return list(self.api.list_repo_tree(
                    repo_id, path_in_repo=path or None, recursive=recursive, revision=commit,
                    repo_type=REPO_TYPE))
            except hf.EntryNotFoundError:
                return []

    def list_files(self, repo_id: str, commit: str, path: str = "") -> list[FileEntry]:
        from huggingface_hub.hf_api import RepoFile

        key = (repo_id, commit, normalize_dir(path))
        if key not in self._trees:
            self._trees[key] = sorted(
                (FileEntry(f.path, f.size, f.blob_id, f.lfs.sha256 if f.lfs else None)
                 for f in self._tree(repo_id, commit, key[2], True) if isinstance(f, RepoFile)),
                key=lambda e: e.path)
        return self._trees[key]

    def list_dirs(self, repo_id: str, commit: str, path: str = "build") -> list[str]:
        from huggingface_hub.hf_api import RepoFolder

        items = self._tree(repo_id, commit, normalize_dir(path), False)
        return sorted(f.path.rsplit("/", 1)[-1] for f in items if isinstance(f, RepoFolder))

    def read_file(self, repo_id: str, commit: str, path: str) -> bytes | None:
        from huggingface_hub import errors as hf

        check_repo_path(path)
        with tempfile.TemporaryDirectory(prefix="kernelkit-hf-") as tmp, \
                self._errors(repo_id, commit):
            try:
                local = self.api.hf_hub_download(repo_id, path, revision=commit,
                                                 repo_type=REPO_TYPE, local_dir=tmp)
            except hf.EntryNotFoundError:
                return None
            return Path(local).read_bytes()

    def fetch(self, repo_id: str, commit: str, paths: list[str], dest: Path) -> None:
        """One ``snapshot_download`` into a temporary sibling of ``dest``, then moved."""
        for p in paths:
            check_repo_path(p)
        dest.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=".kernelkit-hf-", dir=dest) as tmp, \
                self._errors(repo_id, commit):
            self.api.snapshot_download(repo_id, revision=commit, repo_type=REPO_TYPE,
                                       allow_patterns=list(paths), local_dir=tmp)
            for p in paths:
                src = Path(tmp) / p
                if not src.is_file():
                    raise HubError(f"{p} does not exist at commit {commit} of {repo_id}")
                (dest / p).parent.mkdir(parents=True, exist_ok=True)
                shutil.move(str(src), dest / p)

    # --- writing ---------------------------------------------------------------------------

    def publish(self, repo_id: str, branch: str, files: Mapping[str, Path], *,
                delete_prefixes: tuple[str, ...] = (),
                message: str = "Upload with kernelkit") -> str:
        return self._commit(repo_id, branch, files, delete_prefixes, message, False)[0]

    def publish_tagged(self, repo_id: str, branch: str, files: Mapping[str, Path], *, tag: str,
                       delete_prefixes: tuple[str, ...] = (),
                       message: str = "Upload with kernelkit") -> str:
        """:meth:`publish`, then :meth:`tag`; the commit carries ``Kernelkit-Tag: <tag>`` so
        that a crash between the two is repaired by the next upload (module docstring)."""
        check_ref_name(tag, "tag")
        commit = self._commit(repo_id, branch, files, delete_prefixes, message, False, tag)[0]
        self.tag(repo_id, tag, commit)
        return commit

    def repair_tags(self, repo_id: str) -> list[tuple[str, str]]:
        """Create each release tag that a version branch's head commit says it is meant to get
        (``Kernelkit-Tag: v<N>.x.y`` of that branch's major) and that does not exist: what an
        upload killed between its commit and its tag left. Returns ``(tag, commit)`` made."""
        refs = self.list_refs(repo_id)
        tagged = set(refs.tags.values())
        made: list[tuple[str, str]] = []
        for branch, head in sorted(refs.branches.items()):
            major = VERSION_BRANCH.match(branch)
            if major is None or head in tagged:
                continue
            for tag in self._pending_tags(repo_id, head):
                fits = SEMVER_TAG.match(tag)
                if fits and fits.group(1) == major.group(1) and tag not in refs.tags:
                    try:
                        self.tag(repo_id, tag, head)
                    except HubError:  # made meanwhile by a concurrent upload, or refused
                        continue
                    made.append((tag, head))
        return made

    def _pending_tags(self, repo_id: str, commit: str) -> list[str]:
        with self._errors(repo_id, commit):
            history = self.api.list_repo_commits(repo_id, repo_type=REPO_TYPE, revision=commit)
        if not history:
            return []
        return _TRAILER.findall(f"{history[0].title}\n{history[0].message}")

    def publish_pr(self, repo_id: str, branch: str, files: Mapping[str, Path], *,
                   delete_prefixes: tuple[str, ...] = (),
                   message: str = "Upload with kernelkit") -> tuple[str, str | None]:
        """Like :meth:`publish`, but open a pull request against ``branch`` (created from
        ``main`` if missing) instead of moving it. Returns ``(commit, pull request URL)``; no
        changes: ``(branch head, None)`` and no pull request."""
        return self._commit(repo_id, branch, files, delete_prefixes, message, True)

    def web_url(self, repo_id: str, branch: str) -> str:
        base = (self.endpoint or "https://huggingface.co").rstrip("/")
        return f"{base}/kernels/{repo_id}/tree/{branch}"

    def _commit(self, repo_id: str, branch: str, files: Mapping[str, Path],
                delete_prefixes: tuple[str, ...], message: str,
                create_pr: bool, tag: str | None = None) -> tuple[str, str | None]:
        check_publish(branch, files)
        with self._errors(repo_id, branch):
            self.api.create_repo(repo_id, repo_type=REPO_TYPE, exist_ok=True,
                                 private=self.private or None)
        self.repair_tags(repo_id)
        with self._errors(repo_id, branch):
            old = self._branch_head(repo_id, branch)
            ops = self._operations(repo_id, old, files, delete_prefixes)
            if not ops:
                return old, None
            info = self.api.create_commit(
                repo_id, ops, commit_message=message,
                commit_description=f"{TAG_TRAILER}: {tag}" if tag else None,
                repo_type=REPO_TYPE, revision=branch, parent_commit=old, create_pr=create_pr)
        return str(info.oid), (str(info.pr_url) if info.pr_url else None)

    def _branch_head(self, repo_id: str, branch: str) -> str:
        refs = self.list_refs(repo_id)
        if branch not in refs.branches:
            self.api.create_branch(repo_id, branch=branch, repo_type=REPO_TYPE, exist_ok=True)
            refs = self.list_refs(repo_id)
        return refs.branches[branch]

    def _operations(self, repo_id: str, old: str, files: Mapping[str, Path],
                    delete_prefixes: tuple[str, ...]) -> list[Any]:
        """Deletions under ``delete_prefixes`` not re-added, and additions whose git blob id
        differs from the remote file's."""
        from huggingface_hub import CommitOperationAdd, CommitOperationDelete

        remote = {e.path: e for e in self.list_files(repo_id, old)}
        ops: list[Any] = [CommitOperationDelete(path_in_repo=p) for p in sorted(remote)
                          if _under(p, delete_prefixes) and p not in files]
        ops += [CommitOperationAdd(path_in_repo=p, path_or_fileobj=str(files[p]))
                for p in sorted(files)
                if p not in remote or remote[p].blob_id != git_blob_id(files[p])]
        return ops

    def update_refs(self, repo_id: str, changes: Sequence[RefChange], *,
                    message: str = "kernelkit") -> None:
        """Apply ``changes`` (``hub/admin.py``): checked against the current refs first, then
        one API call per ref (the API has no transaction), tags before branches; a moved tag
        that cannot be created again gets its old commit back."""
        refs = self.list_refs(repo_id)
        for c in changes:
            now = (refs.branches if c.kind == "branch" else refs.tags).get(c.name)
            if now != c.old:
                raise PublishRaceError(f"{c.kind} {c.name} of {repo_id} moved",
                                       hint="another process changed it; nothing was changed")
        for c in sorted(changes, key=lambda c: c.kind == "branch"):
            with self._errors(repo_id):
                if c.kind == "branch":
                    assert c.new is None, "branches are only deleted here"
                    self.api.delete_branch(repo_id, branch=c.name, repo_type=REPO_TYPE)
                    continue
                if c.old is not None:
                    self.api.delete_tag(repo_id, tag=c.name, repo_type=REPO_TYPE)
                if c.new is not None:
                    self._create_tag_or_restore(repo_id, c, message)

    def _create_tag_or_restore(self, repo_id: str, c: RefChange, message: str) -> None:
        try:
            self.api.create_tag(repo_id, tag=c.name, revision=c.new, tag_message=message,
                                repo_type=REPO_TYPE)
        except Exception:
            if c.old is not None:
                self.api.create_tag(repo_id, tag=c.name, revision=c.old, repo_type=REPO_TYPE)
            raise

    def tag(self, repo_id: str, tag: str, commit: str) -> None:
        check_ref_name(tag, "tag")
        current = self.list_refs(repo_id).tags.get(tag)
        if current is not None and current != commit:
            raise HubError(f"tag {tag} of {repo_id} already points to {current}; tags never move",
                           hint="publish a new version tag (e.g. bump the patch number) instead")
        if current is None:
            with self._errors(repo_id, commit):
                self.api.create_tag(repo_id, tag=tag, revision=commit, repo_type=REPO_TYPE)


def _network_errors() -> tuple[type[BaseException], ...]:
    """Transport failures of huggingface_hub's HTTP client: ``requests``' are ``OSError``s
    (huggingface_hub < 1.0); ``httpx``'s (1.x) and ``httpx2``'s (2.x) are not."""
    found: list[type[BaseException]] = [OSError]
    for name in ("httpx", "httpx2"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        found.append(module.TransportError)
    return tuple(found)
