"""Write a project's ``kernelkit.toolchain.lock``: resolve and pin every variant's wheels.

Shared by ``kernelkit toolchain lock`` and ``kernelkit init --toolchain-lock``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from kernelkit.build.toolchain_lock import LOCK_FILENAME, LockResult, ToolchainLock


def write_toolchain_lock(kernel_dir: Path, patterns: Sequence[str] = ()) -> tuple[Path, LockResult]:
    """Lock the variants of the project at ``kernel_dir`` (those matching ``patterns``, or all);
    entries of other variants are kept when only some are re-locked."""
    from kernelkit.build.matrix_build import host_system, select
    from kernelkit.build.toolchain_lock import find_lock, lock_project
    from kernelkit.manifest import load_manifest
    from kernelkit.variants.matrix import targets_for

    manifest = load_manifest(kernel_dir)
    root = manifest.root
    here = host_system()
    targets = select(targets_for(manifest, system=here), list(patterns))
    previous = find_lock(root)
    result = lock_project(targets, python=Path(sys.executable), host_system=here,
                          previous=previous, log_path=root / "_cmake_build" / "toolchain-lock.log")
    entries = dict(previous.variants) if previous and patterns else {}
    entries.update(result.lock.variants)
    path = root / LOCK_FILENAME
    ToolchainLock(entries).write(path)
    return path, result
