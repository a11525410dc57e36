"""``kernelkit create-pyproject``: write the CMake/setuptools files for an editable dev install."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "create-pyproject", help="generate CMakeLists.txt, setup.py, pyproject.toml, ...",
        description="Generate the build files of a [torch] kernel so that "
                    "`pip install --no-build-isolation -e .` gives an editable install.")
    p.add_argument("kernel_dir", nargs="?", default=".", type=Path, metavar="KERNEL_DIR")
    p.add_argument("-f", "--force", action="store_true",
                   help="overwrite generated files that differ")
    p.add_argument("--unique-id", default=None,
                   help="op namespace id (default: from the content of the sources, so it "
                        "changes when they do)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kernelkit.builder.compile.namespace_units import namespace_units
    from kernelkit.builder.compile.provenance import build_id
    from kernelkit.generate import project_files, write_files
    from kernelkit.manifest import load_manifest

    root = args.kernel_dir.resolve()
    manifest = load_manifest(root)
    uid = args.unique_id or build_id(manifest)
    files = project_files(manifest, uid, namespace_units(manifest))
    written = write_files(root, files, force=args.force)
    for path in written:
        print(f"wrote {path.relative_to(root)}")
    print(f"{len(written)} written, {len(files) - len(written)} unchanged (unique id {uid})")
    return 0
