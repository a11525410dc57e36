"""``SourceBuild``: the variant provider that builds a missing variant from published sources.

The loader asks it (``kernelkit.loader.provider``) when no published variant of the resolved
commit fits this machine. Per call, in this order:

1. a variant built here before (``<commit>/local/<variant>``, its receipt matching; for a
   locked load also built from the pinned sources) is returned: the warm path, no hub call;
2. :func:`~kernelkit.source_build.target.plan_target` refuses what cannot be built here,
   before any hub call (one line with what to install);
3. the sources digest: the lock's (a locked load builds from the pinned bytes only, and
   refuses without a pin), else the one the commit's variants record (one ``metadata.json``);
4. under the per-variant build lock (a second process waits for the first one's build instead
   of building again; the repository's lock, shared, keeps ``cache rm/prune`` out), the
   sources are unpacked verified (``loader.sources.unpack_sources``: from the cache or fetched
   once), built for this interpreter's torch (CUDA: this machine's GPUs' capabilities only),
   marked as built here (``provenance.kernelkit.built-locally``) and sealed with its own
   digest, checked (``kernelkit check``: every rule, the import in a fresh interpreter), and
   moved into the cache with a receipt, as a download is.

Progress: ``on_stage`` gets one line per stage (default: an ``INFO`` record on the
``kernelkit.source_build`` logger), ``on_event`` the builder's ``BuildEvent``s (default: the
same logger, ``DEBUG``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from kernelkit.errors import (
    BuildError,
    IntegrityError,
    MetadataError,
    NotBuildableError,
    OfflineError,
)
from kernelkit.loader.cache import RepoCache
from kernelkit.loader.owned import check_entry, make_dirs, make_lock_file, seal_modes
from kernelkit.loader.provider import MissingVariant
from kernelkit.loader.receipt import read_receipt, receipt_matches, write_receipt
from kernelkit.source_build.target import Target, plan_target
from kernelkit.util.fs import (
    file_lock,
    recover_dir,
    remove_stale_siblings,
    replace_dir,
    temp_sibling,
    try_file_lock,
)
from kernelkit.variants.choose import best_variant, rank_variants
from kernelkit.variants.host import System

if TYPE_CHECKING:
    from kernelkit.builder.compile.events import BuildEvent, BuildResult

log = logging.getLogger("kernelkit.source_build")

OnStage = Callable[[str], None]
MARK = "built-locally"  # provenance.kernelkit key of a variant built here


def _log_stage(text: str) -> None:
    log.info("%s", text)


def _log_event(event: BuildEvent) -> None:
    log.debug("%s %s: %s", event.kind, event.variant, event.message)


@dataclass(frozen=True)
class SourceBuild:
    """Builds the variant this machine needs from the commit's published sources.

    ``environ``: the environment the build runs with (``PATH``, ``CUDA_HOME``, the ccache and
    ``KERNELKIT_CUDA_CAPABILITIES`` settings); ``python``: the interpreter whose torch it is
    built against (this one). ``trust``: called with the repository id before anything is
    fetched for an unlocked build (building runs the kernel's code: the check imports it)."""

    environ: Mapping[str, str]
    python: Path = field(default_factory=lambda: Path(sys.executable))
    trust: Callable[[str], None] | None = None
    on_stage: OnStage = _log_stage
    on_event: Callable[[BuildEvent], None] = _log_event

    def provide(self, missing: MissingVariant) -> Path:
        rc, commit, system = missing.resolved.cache, missing.resolved.commit, missing.system
        what = f"{rc.repo_id}@{commit[:12]}"
        if missing.locked:
            pinned_or_refuse(missing, what)  # a locked load uses pinned sources only
        built = built_variant(rc, commit, system, missing.pinned_sources)
        if built is not None:
            return built
        target = plan_target(system, missing.resolved.variants, what=what,
                             python=self.python, environ=self.environ)
        if not missing.locked and self.trust is not None:
            self.trust(rc.repo_id)
        digest = sources_digest_for(missing, what)
        lock = rc.build_lock_path(commit, target.variant)
        make_lock_file(lock)
        make_lock_file(rc.repo_lock_path())
        with file_lock(rc.repo_lock_path(), shared=True), self._waiting(lock, what, target):
            built = built_variant(rc, commit, system, missing.pinned_sources)
            if built is not None:
                return built
            self.on_stage(f"no published variant of {what} fits this machine "
                          f"({system.describe()}); building {target.describe()} from its "
                          f"sources {digest[:19]}")
            return self._build(missing, target, digest, what)

    @contextlib.contextmanager
    def _waiting(self, lock: Path, what: str, target: Target) -> Iterator[None]:
        with try_file_lock(lock) as got:
            if got:
                yield
                return
        self.on_stage(f"waiting for another process that is building {target.variant} of "
                      f"{what}")
        with file_lock(lock):
            yield

    def _build(self, missing: MissingVariant, target: Target, digest: str, what: str) -> Path:
        rc, commit = missing.resolved.cache, missing.resolved.commit
        started = time.monotonic()
        anchor = rc.local_variant_dir(commit, target.variant)
        make_dirs(anchor.parent)
        check_entry(anchor.parent)
        remove_stale_siblings(anchor, ("work",))  # ours: we hold the build lock
        work = temp_sibling(anchor, "work")
        work.mkdir(mode=0o700)
        try:
            tree = work / "src"
            count = _unpack(missing, digest, tree)
            self.on_stage(f"unpacked {count} verified source files of {what}; compiling")
            result = self._compile(tree, work / "out", target, what)
            _check_fits(result.variant, missing.system, what)
            mark(result.path, rc, commit, digest)
            self.on_stage(f"checking {result.variant} (kernelkit check)")
            self._check(result.path, what)
            final = install_built(rc, commit, result.path)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        self.on_stage(f"built {final.name} of {what} from source in "
                      f"{time.monotonic() - started:.1f} s; cached at {final}")
        return final

    def _compile(self, tree: Path, out: Path, target: Target, what: str) -> BuildResult:
        from kernelkit.builder.api import BuildSettings, build

        settings = BuildSettings.from_environ(self.environ,
                                              cuda_capabilities=target.cuda_capabilities)
        results = build(tree, python=target.python, backends=[target.backend], out_root=out,
                        settings=settings, on_event=self.on_event)
        if len(results) != 1:
            raise BuildError(target.variant, f"the sources of {what} built "
                             f"{len(results)} variants for backend {target.backend}, not one")
        return results[0]

    def _check(self, variant_dir: Path, what: str) -> None:
        from kernelkit.check.api import check_build

        report = check_build(variant_dir, python=self.python)
        if not report.ok:
            found = "; ".join(f"{f.code}: {f.message}" for f in report.errors[:3])
            raise BuildError(variant_dir.name, f"`kernelkit check` refused the build of {what} "
                             f"({len(report.errors)} error(s): {found})",
                             hint="its sources do not build a working variant here; nothing "
                                  "was cached. Report it to the kernel's publisher")


def sources_digest_for(missing: MissingVariant, what: str) -> str:
    """The sources a build of ``missing`` may use: the lock's pin for a locked load (none:
    refused), else what the commit's variants record (none: refused)."""
    if missing.locked:
        return pinned_or_refuse(missing, what)
    from kernelkit.loader.sources import published_sources

    rc, commit = missing.resolved.cache, missing.resolved.commit
    record = published_sources(missing.hub, rc, commit, _same_backend_first(missing),
                               offline=missing.offline)
    if record is not None:
        return record.digest
    if missing.offline:
        raise OfflineError(f"which sources {what} was built from is not in the cache and "
                           "offline mode is on", hint="load it once online with "
                           "build_missing=True, or turn offline mode off")
    raise NotBuildableError(
        what, "none of its published variants records its sources (built before kernelkit "
        "published sources, or by another builder)", who="project",
        hint="ask its publisher to build and `kernelkit upload` it again (uploads publish the "
             "sources), or use an environment a published variant fits")


def pinned_or_refuse(missing: MissingVariant, what: str) -> str:
    """The sources digest the lock pins; a lock without one refuses any build."""
    if missing.pinned_sources is None:
        raise NotBuildableError(
            what, "kernels.lock pins it without the digest of its sources, and a locked load "
            "builds only from pinned sources", who="project",
            hint="run `kernelkit lock --refresh <project>`: it records the digest of the "
                 "published sources in kernels.lock.hashes")
    return missing.pinned_sources


def _same_backend_first(missing: MissingVariant) -> list[str]:
    backend = missing.system.backend
    return sorted(missing.resolved.variants, key=lambda v: (f"-{backend}" not in v, v))


def _unpack(missing: MissingVariant, digest: str, tree: Path) -> int:
    from kernelkit.loader.sources import unpack_sources

    return unpack_sources(missing.hub, missing.resolved.cache, missing.resolved.commit, digest,
                          tree, offline=missing.offline)


def _check_fits(variant: str, system: System, what: str) -> None:
    [decision] = rank_variants([variant], system)
    if not decision.accepted:
        raise BuildError(variant, f"the sources of {what} built {variant}, which does not fit "
                         f"this machine: {decision.reason}")


def mark(variant_dir: Path, rc: RepoCache, commit: str, digest: str) -> None:
    """Record in the variant's provenance that it was built here, from which sources of which
    commit of which hub, and seal it again (its own digest covers the mark)."""
    from kernelkit.artifact.layout import seal_variant
    from kernelkit.artifact.metadata import Metadata, Provenance

    meta = Metadata.read(variant_dir / "metadata.json")
    prov = meta.provenance or Provenance()
    extra = {**prov.extra, MARK: {"repo-id": rc.repo_id, "commit": commit, "hub": rc.hub,
                                  "sources": digest}}
    seal_variant(variant_dir, replace(meta, provenance=replace(prov, extra=extra)))


def install_built(rc: RepoCache, commit: str, staged: Path) -> Path:
    """Move the sealed variant ``staged`` to ``<commit>/local/<variant>`` after verifying it,
    with a receipt (as a download is installed)."""
    from kernelkit.loader.verify import verify_variant

    final = rc.local_variant_dir(commit, staged.name)
    verified = verify_variant(staged, f"{rc.repo_id}@{commit[:12]}:local/{staged.name}")
    seal_modes(staged)
    recover_dir(final)
    replace_dir(staged, final)
    write_receipt(rc.local_receipt_path(commit, staged.name), final, own_digest=None,
                  metadata_raw=verified.metadata_raw)
    return final


def built_variant(rc: RepoCache, commit: str, system: System,
                  pinned: str | None = None) -> Path | None:
    """The variant built here before for ``system`` (its files as their receipt says, else
    hashed again against its digest), built from ``pinned`` sources when given; ``None`` if
    there is none (or it must be built again)."""
    local = rc.commit_dir(commit) / "local"
    try:
        names = [n for n in os.listdir(local) if not n.startswith(".")]
    except (FileNotFoundError, NotADirectoryError):
        return None
    check_entry(local)
    best = best_variant(rank_variants(names, system))
    if best is None:
        return None
    vdir = local / best
    receipt = rc.local_receipt_path(commit, best)
    if not receipt_matches(read_receipt(receipt), vdir):
        from kernelkit.loader.verify import reverify

        try:
            reverify(vdir, receipt, f"{rc.repo_id}@{commit[:12]}:local/{best}")
        except (IntegrityError, MetadataError) as exc:
            log.warning("the variant built here at %s is corrupt (%s); building it again",
                        vdir, exc.message)
            return None
    if pinned is not None and built_from(vdir) != pinned:
        return None
    return vdir


def built_from(variant_dir: Path) -> str | None:
    """The sources digest a variant built here was built from (its mark)."""
    from kernelkit.artifact.metadata import Metadata

    try:
        meta = Metadata.read(variant_dir / "metadata.json")
    except MetadataError:
        return None
    mark_ = meta.provenance.extra.get(MARK) if meta.provenance is not None else None
    sources = mark_.get("sources") if isinstance(mark_, dict) else None
    return sources if isinstance(sources, str) else None
