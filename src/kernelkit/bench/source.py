"""Where the kernel and its scripts come from: a local build (the variant this machine would
load, through the loader's ``get_local_kernel``) or a hub version (``get_kernel``, the
scripts fetched from the same commit)."""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass
from pathlib import Path

from kernelkit.artifact.metadata import Metadata
from kernelkit.bench.results import KernelInfo
from kernelkit.bench.runner import Target
from kernelkit.bench.scripts import SCRIPT_GLOB, find_scripts
from kernelkit.errors import BenchmarkNotFoundError, KernelkitError, UsageError
from kernelkit.hub.port import Hub

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


@dataclass(frozen=True)
class Source:
    """A loaded kernel, its repository root (scripts run there) and its scripts."""

    target: Target
    root: Path
    scripts: list[Path]


def metadata_sha256(variant_dir: Path) -> str:
    """sha256 of ``metadata.json``, which holds the digest of every file: names the build."""
    return hashlib.sha256((variant_dir / "metadata.json").read_bytes()).hexdigest()


def project_root(path: Path) -> Path | None:
    """The kernel project holding ``path`` (a project, its ``build/`` or a variant directory):
    the nearest of it and two parents with a ``build.toml`` or a ``benchmarks/`` folder."""
    path = path.resolve()
    for cand in (path, path.parent, path.parent.parent):
        if (cand / "build.toml").is_file() or (cand / "benchmarks").is_dir():
            return cand
    return None


def repo_id_of(project: Path | None) -> str | None:
    """``[general.hub] repo-id`` of the project's ``build.toml``, if any."""
    if project is None or not (project / "build.toml").is_file():
        return None
    try:
        data = tomllib.loads((project / "build.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return None
    hub = data.get("general", {}).get("hub", {})
    value = hub.get("repo-id") if isinstance(hub, dict) else None
    return value if isinstance(value, str) else None


def load_local(path: Path, *, benchmarks: Path | None = None, backend: str | None = None
               ) -> Source:
    """The variant of the build at ``path`` that this machine would load, and the scripts of
    its project (``benchmarks`` overrides where they are)."""
    from kernelkit.loader.api import get_local_kernel
    from kernelkit.loader.local import find_local_variant
    from kernelkit.variants.host import detect_system

    variant_dir = find_local_variant(path, detect_system(backend)).resolve()
    module = get_local_kernel(variant_dir)
    meta = Metadata.read(variant_dir / "metadata.json")
    project = project_root(path)
    root = project or variant_dir
    bench_dir = benchmarks or root / "benchmarks"
    kernel = meta.provenance.kernel if meta.provenance else None
    info = KernelInfo(name=meta.name, source="local", variant=variant_dir.name,
                      version=meta.version, repo_id=repo_id_of(project), path=str(variant_dir),
                      revision=kernel.commit if kernel else None,
                      dirty=kernel.dirty if kernel else None,
                      metadata_sha256=metadata_sha256(variant_dir))
    return Source(Target(module, info), root,
                  find_scripts(bench_dir, what=f"the kernel project {root}"))


def parse_request(text: str) -> tuple[str, str | None, int | None]:
    """``org/name[@ref]`` -> (repo id, revision, major version): ``@v1`` or ``@1`` is the major
    version 1, anything else a branch, tag or commit."""
    repo_id, _, ref = text.partition("@")
    if not ref:
        return repo_id, None, None
    digits = ref[1:] if ref.startswith("v") else ref
    return (repo_id, None, int(digits)) if digits.isdigit() else (repo_id, ref, None)


def resolve_ref(hub: Hub, repo_id: str, revision: str | None, version: int | str | None
                ) -> tuple[str, str]:
    """(what was asked for, its commit); neither given: the highest ``v<N>`` branch, else
    ``main`` (as ``kernelkit info``)."""
    from kernelkit.loader.versions import major_versions, select_ref

    refs = hub.list_refs(repo_id)
    if revision is None and version is None:
        majors = major_versions(refs)
        revision = f"v{max(majors)}" if majors else "main"
    sel = select_ref(refs, repo_id, revision=revision, version=version)
    asked = revision if revision is not None else (
        f"v{version}" if isinstance(version, int) else f"version {version}")
    return asked, sel.commit


def load_hub(hub: Hub, repo_id: str, *, revision: str | None, version: int | str | None,
             trust_remote_code: bool, scratch: Path, need_scripts: bool = True) -> Source:
    """``repo_id`` at a version from ``hub``: trust checked first (the kernel and its scripts
    both run code), then the kernel loaded and ``benchmarks/benchmark*.py`` of the same commit
    written under ``scratch``."""
    from kernelkit.loader.api import get_kernel, install_kernel
    from kernelkit.loader.settings import read_settings
    from kernelkit.loader.trust import check_trust

    check_trust(repo_id, trust_remote_code, read_settings().trusted_publishers)
    asked, commit = resolve_ref(hub, repo_id, revision, version)
    module = get_kernel(repo_id, revision=commit, hub=hub, trust_remote_code=True)
    variant_dir = install_kernel(repo_id, revision=commit, hub=hub)
    meta = Metadata.read(variant_dir / "metadata.json")
    info = KernelInfo(name=meta.name, source="hub", variant=variant_dir.name,
                      version=meta.version, repo_id=repo_id, revision=asked, commit=commit,
                      metadata_sha256=metadata_sha256(variant_dir))
    root = scratch / "repo"
    scripts: list[Path] = []
    if need_scripts:
        wanted = [f.path for f in hub.list_files(repo_id, commit, "benchmarks")
                  if _is_script(f.path)]
        if not wanted:
            raise BenchmarkNotFoundError(
                f"{repo_id}@{asked} has no benchmark scripts (benchmarks/{SCRIPT_GLOB})",
                hint="the kernel's repository must ship benchmarks/benchmark_<name>.py "
                     "(`kernelkit upload` carries them from the project)")
        hub.fetch(repo_id, commit, wanted, root)
        scripts = find_scripts(root / "benchmarks", what=f"{repo_id}@{asked}")
    return Source(Target(module, info), root, scripts)


def _is_script(path: str) -> bool:
    parts = path.split("/")
    return len(parts) == 2 and parts[1].startswith("benchmark") and parts[1].endswith(".py")


def load_compare(spec: str, hub: Hub | None, repo_id: str | None, *, trust_remote_code: bool,
                 scratch: Path, backend: str | None = None) -> Target:
    """The other version for ``--compare``: a local build directory, or a version (``v1``,
    ``1``) or revision of the same repository on the hub."""
    if Path(spec).is_dir():
        from kernelkit.loader.api import get_local_kernel
        from kernelkit.loader.local import find_local_variant
        from kernelkit.variants.host import detect_system

        variant_dir = find_local_variant(Path(spec), detect_system(backend)).resolve()
        meta = Metadata.read(variant_dir / "metadata.json")
        info = KernelInfo(name=meta.name, source="local", variant=variant_dir.name,
                          version=meta.version, path=str(variant_dir), revision=spec,
                          metadata_sha256=metadata_sha256(variant_dir))
        return Target(get_local_kernel(variant_dir), info)
    if repo_id is None:
        raise UsageError(f"--compare {spec}: no repository to find that version in",
                         hint="set [general.hub] repo-id in build.toml, or compare with a "
                              "local build directory")
    if hub is None:  # pragma: no cover - the CLI always opens one for a hub compare
        raise KernelkitError("--compare with a version needs a hub")
    _, revision, version = parse_request(f"{repo_id}@{spec}")
    src = load_hub(hub, repo_id, revision=revision, version=version,
                   trust_remote_code=trust_remote_code, scratch=scratch, need_scripts=False)
    return src.target
