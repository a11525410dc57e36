"""``kernelkit verify-signature REPO_ID [VERSION] [--all-variants]`` (upstream's command)."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "verify-signature", help="verify the signatures of a kernel's variants",
        description="Download this machine's variant of REPO_ID at VERSION (--all-variants: "
        "every variant), verify its digest and its signatures (kernelkit's "
        "build/<variant>.kksig, upstream's metadata.json.sigstore) and apply the trust policy "
        "(KERNELKIT_TRUST_POLICY). Exit code 1 when a variant is unsigned or refused.")
    from kernelkit.cli.parser import add_hub, add_json, add_repo_id, add_revision

    add_repo_id(p)
    p.add_argument("version", metavar="VERSION", nargs="?",
                   help="major version (1: the branch v1) or a release specifier ('>=1.1,<2'); "
                   "default: the newest major version, else main")
    p.add_argument("--all-variants", action="store_true", help="every variant, not only "
                   "the one this machine would load")
    p.add_argument("--filter-unsigned", action="store_true", help="skip unsigned variants")
    add_revision(p)
    p.add_argument("--backend", metavar="BACKEND",
                   help="judge variants for another backend (cpu, cuda, ...)")
    add_hub(p)
    p.add_argument("--cache-dir", type=Path, metavar="CACHE_DIR",
                   help="the kernel cache (default: $KERNELKIT_CACHE)")
    add_json(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kernelkit.errors import UsageError
    from kernelkit.hub import open_hub
    from kernelkit.loader.signatures import verify_kernel_signatures

    if args.version is not None and args.revision is not None:
        raise UsageError("give one of VERSION and --revision, not both",
                         hint="e.g. kernelkit verify-signature org/name 1")
    hub = open_hub(args.hub) if args.hub else None
    version: int | str | None = None
    if args.version is not None:
        version = int(args.version) if args.version.isdigit() else args.version
    commit, results = verify_kernel_signatures(  # neither: the newest major, as `info`
        args.repo_id, revision=args.revision, version=version, all_variants=args.all_variants,
        backend=args.backend, hub=hub, cache_dir=args.cache_dir)
    shown = [r for r in results if r.signed or not args.filter_unsigned]
    if args.json:
        from kernelkit.cli import ui

        ui.emit_json({"repo_id": args.repo_id, "commit": commit, "variants": [
            {"variant": r.variant, "ok": r.ok, "signed": r.signed, "signers": list(r.signers),
             "message": r.message} for r in shown]})
    else:
        for r in shown:
            print(f"{'ok' if r.ok else 'FAILED':6} {r.variant}: {r.message}")
    return 0 if all(r.ok for r in shown) else 1
