"""Which built variants of a project ``kernelkit test`` runs, and in which interpreter.

Each variant under ``build/`` is judged as the loader judges it (``variants.choose``): against
this interpreter first (noarch variants and the variant of this interpreter's torch); an arch
variant that this interpreter cannot load runs in the pinned environment it was built in
(``kernelkit build --all``), if that environment exists and can load it. Every variant that is
not run says why and whose limitation that is.
"""

from __future__ import annotations

import fnmatch
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from kernelkit.artifact.layout import discover_variants
from kernelkit.builder.toolchain.envs import env_spec, existing_env
from kernelkit.builder.toolchain.probe import TorchEnv, probe_python
from kernelkit.builder.toolchain.toolchain_lock import find_toolchain_lock
from kernelkit.builder.toolchain.toolkit import find_cuda_toolkit
from kernelkit.errors import KernelkitError, RefusalKind
from kernelkit.manifest import Manifest, load_manifest
from kernelkit.util.paths import default_envs_dir
from kernelkit.util.versions import major_minor
from kernelkit.variants.choose import rank_variants
from kernelkit.variants.host import System, detect_system, host_platform
from kernelkit.variants.matrix import targets_for
from kernelkit.variants.name import parse_variant


@dataclass(frozen=True)
class VariantTest:
    """One built variant: the interpreter its tests run in, or why they do not run."""

    variant: str
    path: Path
    python: Path | None  # None: not run (see reason and who)
    reason: str
    who: RefusalKind | None = None


def system_of(env: TorchEnv) -> System:
    """What the loader would detect in the environment ``env`` describes."""
    backend, version = "cpu", None
    if env.cuda:
        backend, version = "cuda", major_minor(env.cuda)
    elif env.hip:
        backend, version = "rocm", major_minor(env.hip)
    return System(torch_version=major_minor(env.torch_release),
                  cxx11_abi=env.cxx11_abi if env.os == "linux" else None, backend=backend,
                  backend_version=version, cpu=env.machine, os=env.os)


def _select(names: list[str], patterns: Sequence[str]) -> list[str]:
    if not patterns:
        return names
    return [n for n in names if any(fnmatch.fnmatchcase(n, p) for p in patterns)]


def _pinned_python(manifest: Manifest, variant: str, envs_dir: Path) -> Path | None:
    """The interpreter of the existing pinned environment ``variant`` was built in."""
    targets = {t.variant: t for t in targets_for(manifest, system=host_platform())}
    target = targets.get(variant)
    if target is None or target.pin is None or target.kind == "noarch":
        return None
    lock = find_toolchain_lock(manifest.root)
    spec = env_spec(target, locked=lock.variants.get(variant) if lock else None,
                    system_toolkit=find_cuda_toolkit())
    env_dir = existing_env(spec, envs_dir)
    return env_dir / "bin" / "python" if env_dir is not None else None


def _judge(manifest: Manifest, name: str, path: Path, here: System,
           envs_dir: Path) -> VariantTest:
    decision = rank_variants([name], here)[0]
    if decision.accepted:
        return VariantTest(name, path, Path(sys.executable),
                          f"this interpreter ({here.describe()})")
    if parse_variant(name).backend == "cpu" and here.backend != "cpu":
        # The torch could run CPU kernels, but a suite loads its kernel through a loader
        # (upstream's get_kernel, LOCAL_KERNELS), which picks this machine's backend and
        # refuses a cpu variant here: its tests cannot reach it (seen on the H200).
        return VariantTest(name, path, None, f"{decision.reason}: on a {here.backend} machine "
                          "the loaders (kernelkit's and upstream's) choose the "
                          f"{here.backend} variant, so this suite cannot load the cpu one; "
                          "run it on a cpu torch", "machine")
    if parse_variant(name).is_noarch:  # any interpreter loads it; this one's backend differs
        return VariantTest(name, path, None, decision.reason, "machine")
    pinned = _pinned_python(manifest, name, envs_dir)
    if pinned is None:
        return VariantTest(name, path, None, decision.reason + " (and no pinned build "
                          "environment of this variant exists here)", "machine")
    env = probe_python(pinned)
    system = system_of(env)
    in_env = rank_variants([name], system)[0]
    if not in_env.accepted:
        return VariantTest(name, path, None, f"{in_env.reason} (in {pinned})", "machine")
    return VariantTest(name, path, pinned, f"its pinned environment ({system.describe()})")


def choose_variant_tests(project: Path, *, patterns: Sequence[str] = (),
                        build_dir: Path | None = None,
                        envs_dir: Path | None = None) -> tuple[Manifest, list[VariantTest]]:
    """The built variants of ``project`` matching ``patterns`` (fnmatch; all when none), each
    with the interpreter its tests run in or the reason they cannot run here."""
    # Only names are needed (no compile): sources are not checked.
    manifest = load_manifest(Path(project).resolve(), check_sources=False)
    root = manifest.root.resolve()
    if not (root / "tests").is_dir():
        raise KernelkitError(f"{root} has no tests/ directory",
                             hint="kernelkit test runs the project's own pytest suite in tests/")
    tree = discover_variants(build_dir or root / "build")
    if tree is None:
        raise KernelkitError(f"{build_dir or root / 'build'} holds no built variant",
                             hint=f"run `kernelkit build {root}` first")
    names = _select(tree.names, patterns)
    if not names:
        raise KernelkitError(f"no built variant matches --variant {' '.join(patterns)}",
                             hint="built: " + ", ".join(tree.names))
    here = detect_system()
    envs = envs_dir or default_envs_dir()
    return manifest, [_judge(manifest, n, tree.root / n, here, envs) for n in names]
