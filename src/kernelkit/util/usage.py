"""How a person loads a published kernel: the one usage line that cards, ``upload`` and the
loader's hints show, with ``trust_remote_code=True`` exactly where the loader would ask for it
(docs/security.md "Publisher trust")."""

from __future__ import annotations

from collections.abc import Sequence

from kernelkit.util.publishers import DEFAULT_TRUSTED_PUBLISHERS


def needs_trust(repo_id: str, trusted: Sequence[str] = DEFAULT_TRUSTED_PUBLISHERS) -> bool:
    """Whether loading ``repo_id`` needs ``trust_remote_code=True`` (its org is not trusted)."""
    return repo_id.split("/", 1)[0] not in trusted


def load_call(repo_id: str, *, version: int | str | None = None, revision: str | None = None,
              trusted: Sequence[str] = DEFAULT_TRUSTED_PUBLISHERS,
              module: str = "kernelkit") -> str:
    """``kernelkit.get_kernel("org/name", version=1, trust_remote_code=True)``: the call that
    loads ``repo_id`` at ``version`` (an int is written bare, a specifier quoted) or
    ``revision``; the trust argument only where ``trusted`` does not cover the org."""
    args = [_py(repo_id)]
    if version is not None:
        args.append(f"version={version if isinstance(version, int) else _py(str(version))}")
    elif revision is not None:
        args.append(f"revision={_py(revision)}")
    if needs_trust(repo_id, trusted):
        args.append("trust_remote_code=True")
    return f"{module}.get_kernel({', '.join(args)})"


def _py(text: str) -> str:
    """A Python string literal in double quotes (what a card shows)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
