"""``kernelkit verify-signature REPO VERSION [--all-variants]`` (upstream's command)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "verify-signature", help="verify the signatures of a kernel's variants",
        description="Download this machine's variant of REPO at VERSION (--all-variants: "
        "every variant), verify its digest and its signatures (kernelkit's "
        "build/<variant>.kksig, upstream's metadata.json.sigstore) and apply the trust policy "
        "(KERNELKIT_TRUST_POLICY). Exit code 1 when a variant is unsigned or refused.")
    p.add_argument("repo_id", metavar="REPO", help="ORG/NAME")
    p.add_argument("version", metavar="VERSION", nargs="?",
                   help="major version (1: the branch v1) or a release specifier ('>=1.1,<2')")
    p.add_argument("--all-variants", action="store_true", help="every variant, not only "
                   "the one this machine would load")
    p.add_argument("--filter-unsigned", action="store_true", help="skip unsigned variants")
    p.add_argument("--revision", help="a branch, tag or commit instead of VERSION")
    p.add_argument("--backend", help="judge variants for another backend (cpu, cuda, ...)")
    p.add_argument("--hub", help="hub directory, git+<url>, or hf (default: $KERNELKIT_HUB)")
    p.add_argument("--cache-dir", type=Path, help="the kernel cache (default: $KERNELKIT_CACHE)")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kernelkit.errors import UsageError
    from kernelkit.hub import open_hub
    from kernelkit.loader.signatures import verify_kernel_signatures

    if (args.version is None) == (args.revision is None):
        raise UsageError("give exactly one of VERSION and --revision",
                         hint="e.g. kernelkit verify-signature org/name 1")
    version: int | str | None = None
    if args.version is not None:
        version = int(args.version) if args.version.isdigit() else args.version
    hub = open_hub(args.hub) if args.hub else None
    commit, results = verify_kernel_signatures(
        args.repo_id, revision=args.revision, version=version, all_variants=args.all_variants,
        backend=args.backend, hub=hub, cache_dir=args.cache_dir)
    shown = [r for r in results if r.signed or not args.filter_unsigned]
    if args.json:
        print(json.dumps({"repo_id": args.repo_id, "commit": commit, "variants": [
            {"variant": r.variant, "ok": r.ok, "signed": r.signed, "signers": list(r.signers),
             "message": r.message} for r in shown]}, indent=2))
    else:
        for r in shown:
            print(f"{'ok' if r.ok else 'FAILED':6} {r.variant}: {r.message}")
    return 0 if all(r.ok for r in shown) else 1
