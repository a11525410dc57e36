"""``kernelkit variants REPO|PATH``: the loader's decision trace, per version (upstream 0.19's
``kernels variants``).

Shows the build variants of the latest major version (default; ``main`` for a repository
without version branches, as ``info``), of one ``--version N|latest``
(or, kernelkit's addition, a specifier over release tags such as ``">=1.1,<2"``), of every
major version (``--all-versions``) or of one ``--revision``, each with whether it fits this
machine and why, in the loader's preference order; the one marked ``preferred`` is what
``get_kernel`` loads. ``--only-compatible`` leaves out the rest. A local directory is ranked
as it is. Exit code 1 when no listed revision has a variant that fits. A revision no variant
fits says whether ``build_missing`` would build one here from its published sources, and why
(not) (``build`` in ``--json``; ``kernelkit.source_build.explain``).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kernelkit.cli.parser import add_hub, add_json, add_kernel, add_revision, add_version
from kernelkit.errors import ExitCode

if TYPE_CHECKING:
    from kernelkit.lock.report import RevisionVariants
    from kernelkit.variants.choose import Decision
    from kernelkit.variants.host import System


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "variants", help="show which build variant get_kernel would load here, and why",
        description="Rank the build variants of a kernel (a hub repository, by default its "
        "latest major version, or a local directory) for this machine, with a reason for each.")
    add_arguments(p)
    p.set_defaults(func=run)


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_kernel(p)
    which = p.add_mutually_exclusive_group()
    which.add_argument("--all-versions", action="store_true",
                       help="every major version (default: the latest, else main)")
    add_version(which, latest=True)
    add_revision(which)
    p.add_argument("--only-compatible", action="store_true",
                   help="only the variants that fit this machine")
    p.add_argument("--backend", default=None, metavar="BACKEND",
                   help="judge variants for this backend (cpu, ...)")
    add_hub(p)
    add_json(p)


def run(args: argparse.Namespace) -> int:
    from kernelkit.variants.host import detect_system

    system = detect_system(args.backend)
    rows = _rows(args, system)
    builds = _builds(args, rows, system)
    if args.only_compatible:
        for row in rows:
            row.decisions[:] = [d for d in row.decisions if d.accepted]
    if args.json:
        key = "path" if Path(args.kernel).is_dir() else "repo_id"
        print(json.dumps({key: args.kernel, "system": system.describe(),
                          "revisions": [_row_json(r, builds.get(r.commit)) for r in rows]},
                         indent=2))
    else:
        _print(rows, system, only_compatible=args.only_compatible, builds=builds)
    fits = any(d.accepted for row in rows for d in row.decisions)
    return ExitCode.OK if fits else ExitCode.ERROR


def _builds(args: argparse.Namespace, rows: list[RevisionVariants],
            system: System) -> dict[str, Any]:
    """commit -> what ``build_missing`` would do there (revisions no variant fits only)."""
    if Path(args.kernel).is_dir():
        return {}
    from kernelkit.hub import open_hub
    from kernelkit.settings import KERNELKIT_BUILD_MISSING, process_environ
    from kernelkit.source_build.explain import explain_build

    hub = open_hub(args.hub) if args.hub else None
    out = {}
    for row in rows:
        found = explain_build(args.kernel, row.commit, row.decisions, system, hub=hub,
                              enabled=KERNELKIT_BUILD_MISSING.read(process_environ()))
        if found is not None:
            out[row.commit] = found
    return out


def _rows(args: argparse.Namespace, system: System) -> list[RevisionVariants]:
    from kernelkit.errors import UsageError
    from kernelkit.lock.report import RevisionVariants

    path = Path(args.kernel)
    if path.is_dir():
        if args.version is not None or args.revision is not None or args.all_versions:
            raise UsageError(f"{path} is a local directory: --version/--revision/"
                             "--all-versions do not apply")
        from kernelkit.artifact.layout import discover_variants
        from kernelkit.variants.choose import rank_variants

        tree = discover_variants(path)
        return [RevisionVariants(None, str(path), "", rank_variants(
            tree.names if tree else [], system))]
    from kernelkit.hub import open_hub
    from kernelkit.lock.report import variants_report

    return variants_report(args.kernel, all_versions=args.all_versions, version=args.version,
                           revision=args.revision, backend=args.backend,
                           hub=open_hub(args.hub) if args.hub else None)


def _row_json(row: RevisionVariants, build: Any = None) -> dict[str, Any]:
    """Upstream's keys (``version``, ``revision``, per variant ``variant``, ``compatible``,
    ``preferred``, ``reason``: ``null`` when compatible) plus ``commit`` and ``build`` (what
    ``build_missing`` would do, ``null`` when a variant fits)."""
    preferred = _preferred(row.decisions)
    return {"version": row.version, "revision": row.revision, "commit": row.commit or None,
            "variants": [{"variant": d.variant, "compatible": d.accepted,
                          "preferred": d.variant == preferred,
                          "reason": None if d.accepted else d.reason}
                         for d in row.decisions],
            "build": build.to_json() if build is not None else None}


def _preferred(decisions: list[Decision]) -> str | None:
    return next((d.variant for d in decisions if d.accepted), None)


def _print(rows: list[RevisionVariants], system: System, *, only_compatible: bool,
           builds: dict[str, Any]) -> None:
    from kernelkit.variants.choose import format_trace

    print(f"System: {system.describe()}")
    for row in rows:
        if row.version is not None:
            label = f"Version {row.version} ({row.commit[:12]})"
        elif row.commit:
            label = f"Revision {row.revision} ({row.commit[:12]})"
        else:
            label = f"Path {row.revision}"
        empty = "No compatible variants found." if only_compatible else "No build variants found."
        print(f"\n{label}:\n\n{format_trace(row.decisions) or empty}")
        if row.commit in builds:
            print(f"\n{builds[row.commit].line()}")
