"""``kernelkit info REPO-OR-PATH [--revision R | --version V] [--dep-tree] [--json] [--hub HUB]``.

As upstream 0.19's ``kernels info``: the metadata of the variant this machine would load, its
kernel dependencies (transitively, resolved on the hub; ``--dep-tree`` draws them as a tree, a
nested object with ``--json``) and the Python dependencies of the whole tree. When no variant
fits this machine, ``build`` says whether ``build_missing`` would build one here from the
published sources, and why (not) (``kernelkit.source_build.explain``)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from kernelkit.cli.parser import add_hub, add_json, add_kernel, add_revision, add_version

_LABELS = [("variant", "Variant"), ("name", "Name"), ("version", "Version"),
           ("kernels_minver", "Minimum kernels version"), ("license", "License"),
           ("upstream", "Upstream"), ("source", "Source"),
           ("kernel_depends", "Kernel dependencies"), ("python_depends", "Python dependencies"),
           ("backends", "Backends"),
           ("variants", "Variants")]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("info", help="show a kernel's metadata, variants and provenance")
    add_kernel(p)
    g = p.add_mutually_exclusive_group()
    add_revision(g)
    add_version(g)
    p.add_argument("--dep-tree", action="store_true",
                   help="show the kernel dependencies as a tree (a nested object with --json)")
    add_json(p)
    add_hub(p)
    p.set_defaults(func=run)


def _human(info: dict[str, Any]) -> str:
    lines = ([f"Path: {info['path']}"] if "path" in info else
             [f"Repository: {info['repo_id']}", f"Revision: {info['revision']}",
              f"Commit: {info['commit']}"])
    for key, label in _LABELS:
        if key == "kernel_depends" and "dependency_tree" in info:
            from kernelkit.lock.report import format_tree

            root = info.get("repo_id", info.get("path"))
            lines += ["Kernel dependencies:", *format_tree(str(root), info["dependency_tree"])]
            continue
        value = info.get(key)
        if isinstance(value, list):
            value = ", ".join(str(v) for v in value)
        lines.append(f"{label}: {value if value not in (None, '') else '-'}")
    digest = info.get("digest")
    lines.append(f"Digest: {digest['algorithm'] + ', ' + str(len(digest['files'])) + ' files'}"
                 if digest else "Digest: -")
    prov = info.get("provenance")
    lines.append(f"Provenance: {json.dumps(prov, sort_keys=True) if prov else '-'}")
    if info.get("build"):
        from kernelkit.source_build.explain import BuildExplanation

        lines.append(BuildExplanation(**info["build"]).line())
    if info.get("benchmarks"):
        from kernelkit.bench.stored import format_brief

        lines.append("Benchmarks:")
        lines += [f"  {line}" for entry in info["benchmarks"] for line in format_brief(entry)]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from kernelkit.bench.stored import hub_results, local_results
    from kernelkit.errors import UsageError
    from kernelkit.lock.report import hub_info, local_info

    path = Path(args.kernel)
    if path.is_dir():
        if args.revision or args.version:
            raise UsageError("--revision/--version only apply to hub kernels, not to "
                                 f"the local directory {path}")
        from kernelkit.cli.online import open_online_hub

        info = local_info(path, hub=lambda: open_online_hub(args.hub, "info"),
                          dep_tree=args.dep_tree)
        info["benchmarks"] = local_results(path)  # `kernelkit benchmark --save`
    else:
        from kernelkit.cli.online import open_online_hub

        version: int | str | None = args.version
        hub = open_online_hub(args.hub, "info")
        info = hub_info(hub, args.kernel, revision=args.revision, version=version,
                        dep_tree=args.dep_tree)
        info["benchmarks"] = hub_results(hub, info["repo_id"], info["commit"])  # uploaded
        info["build"] = _build(info, hub)
    print(json.dumps(info, indent=2) if args.json else _human(info))
    return 0


def _build(info: dict[str, Any], hub: Any) -> dict[str, Any] | None:
    """What ``build_missing`` would do here when no published variant fits (else ``None``)."""
    from kernelkit.settings import KERNELKIT_BUILD_MISSING, process_environ
    from kernelkit.source_build.explain import explain_build
    from kernelkit.variants.choose import rank_variants
    from kernelkit.variants.host import detect_system

    system = detect_system()
    found = explain_build(info["repo_id"], info["commit"],
                          rank_variants(info["variants"], system), system, hub=hub,
                          enabled=KERNELKIT_BUILD_MISSING.read(process_environ()))
    return found.to_json() if found is not None else None
