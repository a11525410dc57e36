"""Undo ``create-pyproject`` and the editable dev build (spec §3.10), never touching sources.

Generated files are removed only while they still look generated (kernelkit's header, or the
exact content kernelkit writes); edited ones are kept and reported. Paths are relative to the
project (not to the working directory, unlike upstream's ``clean-pyproject``).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

from kernelkit.generate.project import project_files
from kernelkit.generate.python import GENERATED_MARK
from kernelkit.manifest import load_manifest


@dataclass(frozen=True)
class CleanPlan:
    removed: list[Path] = field(default_factory=list)
    kept: list[Path] = field(default_factory=list)


def _looks_generated(path: Path, expected: str) -> bool:
    text = path.read_text("utf-8", "replace")
    return GENERATED_MARK in text[:400] or text == expected


def plan_clean(root: Path) -> CleanPlan:
    """What ``clean_project`` would remove (and which generated paths it would keep)."""
    manifest = load_manifest(root, check_sources=False)
    plan = CleanPlan()
    for rel, expected in project_files(manifest, "0000000").items():
        path = root / rel
        if path.is_file():
            (plan.removed if _looks_generated(path, expected) else plan.kept).append(path)
    py = manifest.general.python_name
    artifacts = [root / "_cmake_build", *root.glob("*.egg-info"),
                 *(root / "torch-ext").glob("*.egg-info"),
                 *(root / "torch-ext" / py).glob(f"_{py}_*.so")]
    plan.removed.extend(p for p in artifacts if p.exists())
    return plan


def clean_project(root: Path, *, dry_run: bool = False) -> CleanPlan:
    """Remove generated files and dev artifacts of the project at ``root``."""
    plan = plan_clean(root)
    if dry_run:
        return plan
    for path in plan.removed:
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink()
    cmake_dir = root / "cmake"
    if cmake_dir.is_dir() and not any(cmake_dir.iterdir()):
        cmake_dir.rmdir()
    return plan
