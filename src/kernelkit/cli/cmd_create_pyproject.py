"""``kernelkit create-pyproject``: write the CMake/setuptools files for an editable dev install."""

from __future__ import annotations

import argparse
from typing import Any

from kernelkit.cli.parser import add_json, add_project
from kernelkit.cli.ui import emit_json


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "create-pyproject", help="generate CMakeLists.txt, setup.py, pyproject.toml, ...",
        description="Generate the build files of a [torch] kernel so that "
                    "`pip install --no-build-isolation -e .` gives an editable install.")
    add_project(p)
    p.add_argument("-f", "--force", action="store_true",
                   help="overwrite generated files that differ")
    p.add_argument("--unique-id", default=None,
                   help="op namespace id (default: from the content of the sources, so it "
                        "changes when they do)")
    add_json(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kernelkit.builder.compile.namespace_units import namespace_units
    from kernelkit.builder.compile.provenance import build_id
    from kernelkit.generate import project_files, write_files
    from kernelkit.manifest import load_manifest

    root = args.project.resolve()
    manifest = load_manifest(root)
    uid = args.unique_id or build_id(manifest)
    files = project_files(manifest, uid, namespace_units(manifest))
    written = write_files(root, files, force=args.force)
    if args.json:
        emit_json({"project": str(root), "unique_id": uid,
                   "written": [str(p.relative_to(root)) for p in written],
                   "unchanged": sorted(set(files) - {str(p.relative_to(root)) for p in written})})
        return 0
    for path in written:
        print(f"wrote {path.relative_to(root)}")
    print(f"{len(written)} written, {len(files) - len(written)} unchanged (unique id {uid})")
    return 0
