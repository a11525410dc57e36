"""Find the ``kernels.lock`` to use: the one lock locator (:func:`find_kernels_lock`).

An explicit path is a file, or a directory that holds ``kernels.lock``. Without one, the
``kernels.lock`` of the code that called a locked loader.

Rule (upstream's package-metadata lookup is broken, upstream-loader.md §3.4):

1. Take the first stack frame outside ``kernelkit`` (and outside ``importlib``): the caller.
2. From the directory of the caller's source file, walk up the parents. The first directory
   that holds ``kernels.lock`` wins; a directory that holds ``pyproject.toml`` but no
   ``kernels.lock`` ends the walk (that is the caller's project, and it is not locked).
3. Else, if the caller belongs to an installed distribution, that distribution's
   ``kernels.lock`` in its ``.dist-info`` (where upstream's build hook copies it).
4. Else the same walk from the current working directory (interactive sessions, notebooks).
"""

from __future__ import annotations

import inspect
from importlib import metadata as importlib_metadata
from pathlib import Path

from kernelkit.errors import LockError
from kernelkit.lock.lockfile import LOCK_NAME

_SKIP_PREFIXES = ("kernelkit.", "importlib", "_frozen_importlib")


def _caller() -> tuple[Path | None, str | None]:
    """The caller's source file and top-level module name."""
    frame = inspect.currentframe()
    while frame is not None:
        name = frame.f_globals.get("__name__", "")
        if name != "kernelkit" and not name.startswith(_SKIP_PREFIXES):
            filename = frame.f_code.co_filename
            path = Path(filename) if not filename.startswith("<") else None
            return (path if path and path.is_file() else None), name.split(".")[0] or None
        frame = frame.f_back
    return None, None


def walk_up(start: Path) -> Path | None:
    """The first ``kernels.lock`` in ``start`` or its parents, stopping at a project root."""
    for d in (start, *start.parents):
        if (d / LOCK_NAME).is_file():
            return d / LOCK_NAME
        if (d / "pyproject.toml").is_file():
            return None
    return None


def _from_distribution(top_module: str) -> Path | None:
    for dist_name in importlib_metadata.packages_distributions().get(top_module, []):
        try:
            dist = importlib_metadata.distribution(dist_name)
        except importlib_metadata.PackageNotFoundError:
            continue
        for f in dist.files or []:
            if f.name == LOCK_NAME and f.parent.name.endswith((".dist-info", ".egg-info")):
                return Path(str(dist.locate_file(f)))
    return None


def find_kernels_lock(lockfile: Path | str | None = None, *, cwd: Path | None = None) -> Path:
    """``lockfile`` (a file, or a directory holding ``kernels.lock``); ``None``: apply the rule
    in the module docstring, raising ``LockError`` that says where it looked. The path is not
    checked to exist when given (:func:`~kernelkit.lock.lockfile.read_locks` says so)."""
    if lockfile is not None:
        path = Path(lockfile)
        return path / LOCK_NAME if path.is_dir() else path
    source, top = _caller()
    looked: list[str] = []
    if source is not None:
        found = walk_up(source.parent.resolve())
        if found:
            return found
        looked.append(f"{source.parent} and its parents (up to the project root)")
    if top:
        found = _from_distribution(top)
        if found:
            return found
        looked.append(f"the installed distribution of module {top!r}")
    here = (cwd or Path.cwd()).resolve()
    found = walk_up(here)
    if found:
        return found
    looked.append(f"{here} and its parents")
    raise LockError(
        f"no {LOCK_NAME} found; looked in: " + "; ".join(looked),
        hint="pass lockfile=<path>, or create it with `kernelkit lock <project>`",
    )
