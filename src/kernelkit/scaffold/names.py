"""Project names for ``kernelkit init`` (upstream-builder.md §6).

``--name owner/repo`` gives the repository id; the kernel name is the repository name with
``_`` turned into ``-`` and lowercased; the Python name turns ``-`` into ``_``; the class name
is CamelCase. Without an owner, ``kernelkit-examples`` is used (upstream asks the Hub who is
logged in; kernelkit never calls the network to scaffold a project).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from kernelkit.errors import KernelkitError

DEFAULT_OWNER = "kernelkit-examples"
_NAME_RE = re.compile(r"^[a-z][-a-z0-9]*[a-z0-9]\Z")


@dataclass(frozen=True)
class ProjectName:
    owner: str
    name: str  # kernel name, kebab-case: build.toml general.name
    python_name: str  # name with - -> _: package, op and directory names
    class_name: str  # CamelCase

    @property
    def repo_id(self) -> str:
        return f"{self.owner}/{self.name}"


def _camel(text: str) -> str:
    return "".join(p[:1].upper() + p[1:].lower() for p in text.replace("-", "_").split("_") if p)


def parse_project_name(text: str, *, default_owner: str = DEFAULT_OWNER) -> ProjectName:
    """``"org/my_kernel"`` -> owner ``org``, name ``my-kernel``; a bare ``"repo"`` gets
    ``default_owner``. Raises :class:`KernelkitError` for anything that is not a valid name."""
    owner, sep, repo = text.strip().rpartition("/")
    if not sep:
        owner = default_owner
    if not owner or not repo or "/" in owner:
        raise KernelkitError(f"invalid project name {text!r}: expected OWNER/REPO or REPO",
                             hint="for example --name my-org/img2gray")
    name = repo.replace("_", "-").lower()
    if not _NAME_RE.match(name):
        raise KernelkitError(
            f"invalid kernel name {name!r} (from {text!r}): it must start with a letter, hold only "
            "lowercase letters, digits and '-', and not end with '-'",
            hint="choose a repository name such as img2gray or my-kernel",
        )
    return ProjectName(owner, name, name.replace("-", "_"), _camel(name))


def resolve_target(path: str | None, name: str | None, cwd: Path, *,
                   default_owner: str = DEFAULT_OWNER) -> tuple[Path, ProjectName]:
    """Where to scaffold and under which name, from ``kernelkit init [PATH] [--name N]``.

    - PATH and NAME: NAME, in PATH.
    - NAME only: NAME, in ``./<name>``.
    - PATH only: PATH read as ``owner/repo`` -> that name in ``./<repo>``; otherwise the last
      component of PATH is the repository name and PATH is the directory (upstream would create
      ``./<last component>``; writing where the user pointed is less surprising).
    - neither: the current directory, named after it.
    """
    if name is not None:
        info = parse_project_name(name, default_owner=default_owner)
        dest = cwd / path if path is not None else cwd / info.name
        return dest, info
    if path is not None:
        parts = path.split("/")
        if len(parts) == 2 and all(parts) and not (cwd / path).exists():
            info = parse_project_name(path, default_owner=default_owner)
            return cwd / info.name, info
        dest = cwd / path
        return dest, parse_project_name(dest.resolve().name, default_owner=default_owner)
    return cwd, parse_project_name(cwd.name, default_owner=default_owner)
