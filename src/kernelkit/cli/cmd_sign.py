"""``kernelkit sign [PROJECT] [--key FILE] [--json]``: sign every variant's ``metadata.json``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kernelkit.signing.keys import SigningKey


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "sign", help="sign the build variants with a publisher key",
        description="Check each variant against its digest, then sign its metadata.json "
        "(which covers every file) with an Ed25519 key: build/<variant>.kksig beside the "
        "variant, which upstream kernels ignores. Signing with another key adds a signature "
        "(key rotation); `kernelkit upload` publishes the signatures.")
    from kernelkit.cli.parser import add_json, add_project

    add_project(p, "a kernel project, its build directory or one variant (default: the "
                "current directory)")
    add_key_argument(p)
    add_json(p)
    p.set_defaults(func=run)


def add_key_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--key", type=Path, metavar="FILE",
                   help="private key (default: the PEM text in $KERNELKIT_SIGNING_KEY, e.g. a CI "
                   "secret, else $XDG_CONFIG_HOME/kernelkit/signing-key.pem)")


def signing_key(path: Path | None) -> SigningKey:
    """``--key FILE``, else ``KERNELKIT_SIGNING_KEY`` (PEM text), else the default key file."""
    from kernelkit.settings import KERNELKIT_SIGNING_KEY, process_environ
    from kernelkit.signing.keys import default_key_path, key_from_pem, load_key_file

    if path is not None:
        return load_key_file(path)
    env = process_environ()
    secret = KERNELKIT_SIGNING_KEY.read(env)
    if secret:
        return key_from_pem(secret.encode("utf-8"), KERNELKIT_SIGNING_KEY.name)
    return load_key_file(default_key_path(env))


def run(args: argparse.Namespace) -> int:
    from kernelkit.cli import ui
    from kernelkit.signing.sign import sign_tree

    key = signing_key(args.key)
    done = sign_tree(args.project, key)
    if args.json:
        ui.emit_json({"key": key.fingerprint, "signed": [
            {"variant": s.variant, "path": str(s.path), "signatures": len(s.signers)}
            for s in done]})
        return 0
    for signed in done:
        others = len(signed.signers) - 1
        more = f" (and {others} earlier signature{'s' if others != 1 else ''})" if others else ""
        print(f"signed {signed.variant}: {signed.path}{more}")
    print(f"key: {key.fingerprint}")
    return 0
