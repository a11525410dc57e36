"""``kernel-status.toml`` redirects (upstream-loader.md §2.9).

A repository may hold ``kernel-status.toml`` at its root::

    kind = "redirect"
    destination = "org/new-name"   # required
    revision = "v2"                # optional, default "main"

Loading such a commit loads ``destination`` at ``revision`` instead (one hop, as upstream, in the
same hub), with a ``UserWarning("'<src>' redirected to '<dst>'")``; every loader entry point
follows it (``kernelkit.loader.resolve``), and ``get_kernel`` asks trust of the destination too:
trust is decided on the repository whose code runs. A missing file means no redirect; a file
without ``kind``, with an unknown kind or without ``destination`` is an error naming the file.

The answer for a commit is cached in ``<cache>/<org>--<name>/<commit>/status.json`` (commits are
immutable), so warm loads ask the hub nothing.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from kernelkit.errors import HubError, InputFileError
from kernelkit.loader.owned import write_owned
from kernelkit.util.inputs import MAX_TOML_BYTES, parse_toml

if TYPE_CHECKING:
    from kernelkit.loader.cache import RepoCache
    from kernelkit.loader.install import LazyHub

STATUS_FILE = "kernel-status.toml"


def parse_status(text: str, where: str) -> tuple[str, str] | None:
    """``(destination, revision)`` of a redirect; ``HubError`` naming ``where`` if invalid."""
    if len(text) > MAX_TOML_BYTES:
        raise HubError(f"{where}: larger than {MAX_TOML_BYTES} bytes",
                       hint="ask the repository's publisher to fix kernel-status.toml")
    try:
        data = parse_toml(text, where)
    except InputFileError as exc:
        raise HubError(exc.message, hint="ask the repository's publisher to fix "
                       "kernel-status.toml") from None
    kind = data.get("kind")
    if not kind:
        raise HubError(f"{where}: no 'kind' field", hint='kernel-status.toml needs kind = '
                       '"redirect" and a destination')
    if kind != "redirect":
        raise HubError(f"{where}: unknown kind {kind!r}", hint='the only kind is "redirect"')
    destination = data.get("destination")
    if not isinstance(destination, str) or not destination:
        raise HubError(f"{where}: a redirect needs a 'destination' (\"org/name\")",
                       hint="ask the repository's publisher to fix kernel-status.toml")
    revision = data.get("revision", "main")
    return destination, str(revision)


def redirect_of(hub: LazyHub, rc: RepoCache, commit: str, *,
                offline: bool) -> tuple[str, str] | None:
    """The redirect recorded at ``commit`` of ``rc.repo_id``, if any (cached per commit)."""
    cached = rc.commit_dir(commit) / "status.json"
    data = rc.read_json(cached)
    if isinstance(data, dict):
        found = data.get("redirect")
        if isinstance(found, list) and len(found) == 2 and all(isinstance(x, str) for x in found):
            return found[0], found[1]
        if found is None:
            return None
    if offline or rc.read_variants(commit) is not None:
        # never recorded, but this commit's own variants were listed (by a download or a load
        # before redirects were checked), or offline: load what is there
        return None
    raw = hub.get().read_file(rc.repo_id, commit, STATUS_FILE)
    redirect = None if raw is None else parse_status(
        raw.decode("utf-8", errors="replace"), f"{rc.repo_id}@{commit[:12]}:{STATUS_FILE}")
    write_owned(cached, json.dumps({"redirect": list(redirect) if redirect else None}).encode())
    return redirect
