"""Run a project's ``tests/`` against one built variant, as its users' code would load it.

The variant is made visible two ways, so suites written for upstream ``kernels`` run unchanged:

- importable under its package name: ``PYTHONPATH`` starts with a temporary directory holding a
  link ``<python_name>`` to the variant directory (``import relu``);
- through ``LOCAL_KERNELS=<repo-id>=<dir>`` (read by upstream ``kernels`` and by kernelkit's
  loader alike), where ``<dir>/build/`` holds only this variant, so
  ``get_kernel("org/name", version=1)`` loads exactly the variant under test. The keys are
  ``general.hub.repo-id`` (when set) and ``general.name``; entries of the caller's
  ``LOCAL_KERNELS`` for other kernels (a suite that loads two) are kept.

pytest runs in the variant's interpreter with the project as working directory and without
writing bytecode (the links point into ``build/``, which must stay sealed).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from kernelkit.errors import RefusalKind
from kernelkit.manifest import Manifest
from kernelkit.testing.choose import VariantTest
from kernelkit.util.run import run

VariantTestStatus = Literal["passed", "failed", "skipped"]
#: pytest's exit status when it collected no test (``-k`` matched nothing).
NO_TESTS_COLLECTED = 5


@dataclass(frozen=True)
class VariantTestOutcome:
    variant: str
    status: VariantTestStatus
    reason: str
    python: Path | None = None
    returncode: int | None = None
    log_path: Path | None = None
    who: RefusalKind | None = None

    def to_json(self) -> dict[str, Any]:
        return {"variant": self.variant, "status": self.status, "reason": self.reason,
                "who": self.who, "python": str(self.python) if self.python else None,
                "returncode": self.returncode,
                "log": str(self.log_path) if self.log_path else None}


def repo_ids(manifest: Manifest) -> list[str]:
    """The names test suites load the kernel by: the Hub repo id, and the kernel's name."""
    g = manifest.general
    return list(dict.fromkeys(x for x in (g.hub.repo_id, g.name) if x))


def link_variant(target: VariantTest, python_name: str, workdir: Path) -> tuple[Path, Path]:
    """``(import dir, local kernel dir)`` under ``workdir``, both linking to the variant."""
    imports, local = workdir / "import", workdir / "local" / "build"
    imports.mkdir(parents=True)
    local.mkdir(parents=True)
    (imports / python_name).symlink_to(target.path.resolve(), target_is_directory=True)
    (local / target.variant).symlink_to(target.path.resolve(), target_is_directory=True)
    return imports, local.parent


def variant_environ(manifest: Manifest, imports: Path, local: Path,
                 base: Mapping[str, str]) -> dict[str, str]:
    """The process environment of one variant's test run."""
    env = dict(base)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(imports), base.get("PYTHONPATH")) if p)
    ours = [f"{rid}={local}" for rid in repo_ids(manifest)]
    # the caller's entries (other kernels the suite loads) stay; ours come last and win
    env["LOCAL_KERNELS"] = ":".join([*filter(None, [base.get("LOCAL_KERNELS")]), *ours])
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def pytest_command(python: Path, tests: Path, args: Sequence[str]) -> list[str]:
    return [str(python), "-m", "pytest", "-p", "no:cacheprovider", str(tests), *args]


def _has_pytest(python: Path, environ: Mapping[str, str]) -> bool:
    proc = run([str(python), "-c", "import pytest"], env=environ, check=False)
    return proc.returncode == 0


def run_variant_tests(manifest: Manifest, target: VariantTest, pytest_args: Sequence[str] = (),
                      *, environ: Mapping[str, str], stream: bool = False) -> VariantTestOutcome:
    """Run ``tests/`` of ``manifest``'s project against ``target``. ``stream``: pytest writes
    to this process's stdout/stderr as it runs; else its output goes to a log file."""
    if target.python is None:
        return VariantTestOutcome(target.variant, "skipped", target.reason, who=target.who)
    if not _has_pytest(target.python, environ):
        return VariantTestOutcome(target.variant, "skipped", f"{target.python} has no pytest "
                                  "(install pytest, and the suite's own test dependencies, "
                                  "into it)", target.python, who="machine")
    workdir = Path(tempfile.mkdtemp(prefix=f"kernelkit-test-{target.variant}-"))
    try:
        imports, local = link_variant(target, manifest.general.python_name, workdir)
        env = variant_environ(manifest, imports, local, environ)
        cmd = pytest_command(target.python, manifest.root.resolve() / "tests", pytest_args)
        log_path = None if stream else workdir / "pytest.log"
        if stream:
            code = subprocess.run(cmd, cwd=manifest.root, env=env, check=False).returncode
        else:
            code = run(cmd, cwd=manifest.root, env=env, log_path=log_path, check=False).returncode
    finally:
        shutil.rmtree(workdir / "import", ignore_errors=True)
        shutil.rmtree(workdir / "local", ignore_errors=True)
        if stream:
            shutil.rmtree(workdir, ignore_errors=True)
    return _outcome(target, code, log_path)


def _outcome(target: VariantTest, code: int, log_path: Path | None) -> VariantTestOutcome:
    if code == 0:
        return VariantTestOutcome(target.variant, "passed", "pytest passed", target.python, code,
                           log_path)
    if code == NO_TESTS_COLLECTED:
        return VariantTestOutcome(target.variant, "skipped", "pytest collected no tests",
                           target.python, code, log_path)
    return VariantTestOutcome(target.variant, "failed", f"pytest exited with status {code}",
                       target.python, code, log_path)
