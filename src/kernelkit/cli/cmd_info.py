"""``kernelkit info REPO-OR-PATH [--revision R | --version V] [--json] [--hub HUB]``."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

_LABELS = [("name", "Name"), ("version", "Version"), ("license", "License"),
           ("upstream", "Upstream"), ("source", "Source"),
           ("python_depends", "Python dependencies"), ("backends", "Backends"),
           ("variants", "Variants")]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("info", help="show a kernel's metadata, variants and provenance")
    p.add_argument("kernel", help="org/name on the hub, or a local directory")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--revision", help="branch, tag or commit")
    g.add_argument("--version", help="major version (1) or specifier ('>=1.1,<2')")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--hub", default=None, help="hub: a directory, git+<url> or hf")
    p.set_defaults(func=run)


def _human(info: dict[str, Any]) -> str:
    lines = ([f"Path: {info['path']}"] if "path" in info else
             [f"Repository: {info['repo_id']}", f"Revision: {info['revision']}",
              f"Commit: {info['commit']}"])
    for key, label in _LABELS:
        value = info.get(key)
        if isinstance(value, list):
            value = ", ".join(str(v) for v in value)
        lines.append(f"{label}: {value if value not in (None, '') else '-'}")
    digest = info.get("digest")
    lines.append(f"Digest: {digest['algorithm'] + ', ' + str(len(digest['files'])) + ' files'}"
                 if digest else "Digest: -")
    prov = info.get("provenance")
    lines.append(f"Provenance: {json.dumps(prov, sort_keys=True) if prov else '-'}")
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
        info = local_info(path)
        info["benchmarks"] = local_results(path)  # `kernelkit benchmark --save`
    else:
        from kernelkit.cli.online import open_online_hub

        version: int | str | None = args.version
        hub = open_online_hub(args.hub, "info")
        info = hub_info(hub, args.kernel, revision=args.revision, version=version)
        info["benchmarks"] = hub_results(hub, args.kernel, info["commit"])  # uploaded
    print(json.dumps(info, indent=2) if args.json else _human(info))
    return 0
