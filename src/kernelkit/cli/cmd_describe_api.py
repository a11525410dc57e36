"""``kernelkit describe-api KERNEL [--version N | --revision R] [--json]``: a kernel's public
functions and layers from its ``symbols.json``, without importing it (upstream's
``kernels describe-api``)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

from kernelkit.cli.parser import add_hub, add_json, add_kernel, add_revision, add_version

if TYPE_CHECKING:
    from kernelkit.loader.describe import ApiDescription


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "describe-api", help="list a kernel's functions and layers without importing it",
        description="Show the public functions and layers of a kernel (a hub repository or a "
        "local kernel directory) from the symbols.json sealed in the variant this machine would "
        "load. Nothing is imported; for a hub kernel only that variant's metadata.json and "
        "symbols.json are read. Without --version/--revision: the newest major version.")
    add_kernel(p)
    which = p.add_mutually_exclusive_group()
    add_version(which)
    add_revision(which)
    p.add_argument("--backend", default=None, metavar="BACKEND",
                   help="choose the variant for this backend")
    add_hub(p)
    add_json(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kernelkit.errors import UsageError
    from kernelkit.loader.describe import describe_hub, describe_local

    path = Path(args.kernel).expanduser()
    if path.is_dir():
        if args.version is not None or args.revision is not None:
            raise UsageError(f"{path} is a local directory: --version/--revision do not apply")
        info = describe_local(path, backend=args.backend)
    elif path.exists() or args.kernel.startswith((".", "/", "~")) or args.kernel.count("/") != 1:
        raise UsageError(f"not a local kernel directory nor a repository id 'org/name': "
                         f"{args.kernel}")
    else:
        from kernelkit.hub import open_hub

        version: int | str | None = args.version
        if isinstance(version, str) and version.isdigit():
            version = int(version)
        hub = open_hub(args.hub) if args.hub else None
        info = describe_hub(args.kernel, revision=args.revision, version=version,
                            backend=args.backend, hub=hub)
    if args.json:
        print(json.dumps(info.to_json(), indent=2, ensure_ascii=False))
    else:
        print(_human(info))
    return 0


def _human(info: ApiDescription) -> str:
    if info.path is not None:
        lines = [f"Path: {info.path}"]
    else:
        lines = [f"Repository: {info.repo_id}", f"Revision: {info.revision} ({info.commit})"]
    lines += [f"Variant: {info.variant}", "", "Functions:"]
    lines += [f"  {name}" for name in info.symbols.functions] or ["  (none)"]
    lines += ["", "Layers:"]
    for layer in info.symbols.layers:
        flags = "  ".join(
            f"{a}={'unknown' if layer.attributes.get(a) is None else layer.attributes[a]}"
            for a in ("has_backward", "can_torch_compile"))
        lines.append(f"  {layer.name}  {flags}")
    if not info.symbols.layers:
        lines.append("  (none)")
    return "\n".join(lines)
