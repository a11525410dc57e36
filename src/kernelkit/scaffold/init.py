"""``kernelkit init``: render a template into a new kernel project (plan, then write)."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

from kernelkit.errors import CommandError, KernelkitError, ScaffoldExistsError
from kernelkit.scaffold.names import DEFAULT_OWNER, parse_project_name
from kernelkit.scaffold.template import (
    TEMPLATES_DIR,
    load_template,
    render_template,
    select_backends,
)
from kernelkit.util.fs import atomic_write_text
from kernelkit.util.run import run


def plan_project(*, name: str = f"{DEFAULT_OWNER}/img2gray",
                 backends: Sequence[str] | None = None, template: str = "img2gray",
                 license: str = "Apache-2.0",
                 templates_dir: Path = TEMPLATES_DIR) -> dict[str, str]:
    """The files of a new project, ``{relative path: content}``; nothing touches the disk.
    ``backends`` ``None``/empty: the template's defaults."""
    info = parse_project_name(name)
    tmpl = load_template(template, templates_dir)
    return render_template(tmpl, info, select_backends(tmpl, list(backends or [])), license)


def init_project(dest: Path, *, name: str = f"{DEFAULT_OWNER}/img2gray",
                 backends: Sequence[str] | None = ("cpu", "cuda"), template: str = "img2gray",
                 license: str = "Apache-2.0", overwrite: bool = False,
                 git: bool = True, templates_dir: Path = TEMPLATES_DIR) -> list[Path]:
    """Write a new kernel project into ``dest``; return the files written (sorted).

    Refuses (``ScaffoldExistsError``, listing them) when any file exists unless ``overwrite``;
    other files in ``dest`` are left alone. With ``git`` (default), when git is installed and
    ``dest`` is not inside a work tree, runs ``git init`` and stages the new files.
    """
    files = plan_project(name=name, backends=backends, template=template, license=license,
                         templates_dir=templates_dir)
    if dest.exists() and not dest.is_dir():
        raise KernelkitError(f"{dest} exists and is not a directory",
                             hint="choose a directory for the new project")
    existing = sorted(rel for rel in files if (dest / rel).exists())
    if existing and not overwrite:
        raise ScaffoldExistsError(dest, existing)
    written = []
    for rel, text in sorted(files.items()):
        atomic_write_text(dest / rel, text)
        written.append(dest / rel)
    if git:
        init_git(dest, sorted(files))
    return written


def _inside_work_tree(path: Path) -> bool:
    proc = run(["git", "rev-parse", "--is-inside-work-tree"], cwd=path, check=False)
    return proc.returncode == 0 and proc.stdout.strip() == "true"


def init_git(dest: Path, relpaths: list[str]) -> bool:
    """``git init`` + ``git add`` the given files; ``False`` when skipped (no git, or ``dest``
    already belongs to a repository)."""
    if shutil.which("git") is None or _inside_work_tree(dest):
        return False
    try:
        run(["git", "-c", "init.defaultBranch=main", "init", "-q"], cwd=dest, what="git init")
        run(["git", "add", "--", *relpaths], cwd=dest, what="git add")
    except CommandError as exc:
        raise KernelkitError(f"{dest}: files were written but git setup failed: {exc.message}",
                             hint="run `git init && git add .` there yourself") from None
    return True
