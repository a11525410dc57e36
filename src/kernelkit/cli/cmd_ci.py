"""``kernelkit ci github [PROJECT]``: write a GitHub Actions workflow that builds every variant
on its own runner (or in N shards), merges the trees, checks them and optionally uploads."""

from __future__ import annotations

import argparse
from pathlib import Path

from kernelkit.cli.parser import add_json, add_project
from kernelkit.cli.ui import emit_json
from kernelkit.errors import UsageError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("ci", help="write CI configuration that builds the kernel's variants")
    ci = p.add_subparsers(dest="ci_command", metavar="PROVIDER", required=True)
    g = ci.add_parser(
        "github", help="write a GitHub Actions workflow",
        description="Write a GitHub Actions workflow: one build job per variant (or per shard "
        "with --shards N), each uploading its build/ as an artifact; a merge job that runs "
        "`kernelkit merge` and `kernelkit check` (with torch); a test job per CPU variant "
        "(`kernelkit check` and `kernelkit test` with its torch); with --upload, a job that "
        "runs `kernelkit upload` on v* tags (the tag becomes --tag) and manual runs.")
    add_project(g)
    g.add_argument("--shards", type=int, metavar="N",
                   help="N build jobs per system, each `kernelkit build --all --shard K/N` "
                   "(default: one job per variant, `kernelkit build --variant NAME`)")
    g.add_argument("--upload", action="store_true", help="add the upload job")
    g.add_argument("--system", action="append", metavar="SYSTEM",
                   help="systems to build for (repeatable; default: x86_64-linux)")
    g.add_argument("--runner", action="append", default=[], metavar="SYSTEM=LABEL",
                   help="runner label for a system (repeatable), e.g. x86_64-linux=my-runner")
    g.add_argument("--kernelkit", default="kernelkit", metavar="REQUIREMENT",
                   help="the kernelkit each job installs, with the extras it needs added "
                   "(default: kernelkit; e.g. kernelkit==0.2.0 or 'kernelkit @ git+URL')")
    g.add_argument("--install", metavar="COMMAND",
                   help="one install command for every job instead (it must bring what each "
                   "job runs: the build extra, torch for the checks and tests, the hf extra "
                   "for --hub hf)")
    g.add_argument("--no-test", action="store_true",
                   help="leave out the test job (kernelkit check and kernelkit test of each "
                   "CPU variant on a hosted runner)")
    g.add_argument("--python-version", default="3.12", help="setup-python version (default 3.12)")
    g.add_argument("--hub", default="hf", help="`kernelkit upload --hub` (default: hf)")
    g.add_argument("--sign", action="append", choices=("key", "sigstore"), default=[],
                   help="sign in the upload job (repeatable): key = the Ed25519 key in the "
                   "repository secret KERNELKIT_SIGNING_KEY; sigstore = keyless, the "
                   "workflow's GitHub identity (metadata.json.sigstore)")
    add_json(g, "print what was written as JSON (the file, the jobs)")
    g.add_argument("-o", "--output", type=Path, metavar="FILE",
                   help="default: .github/workflows/kernels.yml in the project's git repository "
                   "('-' prints it)")
    g.add_argument("-f", "--force", action="store_true", help="overwrite a different file")
    g.set_defaults(func=_run_github)


def _git_root(path: Path) -> Path | None:
    for candidate in (path, *path.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def _runners(items: list[str]) -> dict[str, str]:
    from kernelkit.ci.github import DEFAULT_RUNNERS

    runners = dict(DEFAULT_RUNNERS)
    for item in items:
        system, sep, label = item.partition("=")
        if not sep or not system or not label:
            raise UsageError(f"--runner {item!r}: expected SYSTEM=LABEL",
                             hint="e.g. --runner x86_64-linux=my-runner")
        runners[system] = label
    return runners


def _run_github(args: argparse.Namespace) -> int:
    from kernelkit.ci.github import WorkflowOptions, render_workflow, tested_variants
    from kernelkit.generate.project import write_files
    from kernelkit.manifest import load_manifest
    from kernelkit.variants.matrix import DEFAULT_SYSTEM, targets_for

    project = args.project.resolve()
    manifest = load_manifest(project)
    targets = [t for system in (args.system or [DEFAULT_SYSTEM])
               for t in targets_for(manifest, system=system)]
    root = _git_root(project) or project
    options = WorkflowOptions(
        shards=args.shards, upload=args.upload,
        project_dir=project.relative_to(root).as_posix() or ".",
        python_version=args.python_version, hub=args.hub, sign=tuple(args.sign),
        runners=tuple(_runners(args.runner).items()),
        install=args.install, kernelkit=args.kernelkit, test=not args.no_test)
    text = render_workflow(targets, options)
    if str(args.output) == "-":
        print(text, end="")
        return 0
    out = (args.output or root / ".github" / "workflows" / "kernels.yml").absolute()
    written = write_files(out.parent, {out.name: text}, force=args.force)
    tested = [t.variant for t in tested_variants(targets, options)] if options.test else []
    if args.json:
        emit_json({"path": str(out), "written": bool(written), "variants":
                   [t.variant for t in targets], "shards": args.shards, "tested": tested,
                   "upload": args.upload})
        return 0
    jobs = f"{args.shards} shard(s) per system" if args.shards else f"{len(targets)} variant job(s)"
    state = "wrote" if written else "unchanged:"
    test = f", {len(tested)} test job(s)" if tested else ""
    print(f"{state} {out} ({jobs}, merge + check{test}{', upload' if args.upload else ''})")
    return 0
