"""``kernelkit keygen [--output FILE] [--json]``: a new Ed25519 publisher key (`kernelkit sign`)."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "keygen", help="create an Ed25519 key for signing kernels",
        description="Write a new Ed25519 private key (PEM, mode 0600) and its public key "
        "(FILE.pub) and print the key's fingerprint, which trust policies and kernels.lock "
        "name. Keep the private key secret (a CI secret, KERNELKIT_SIGNING_KEY); to rotate, "
        "create a new key, list both fingerprints in the trust policy, sign with the new one, "
        "and revoke the old one when its builds are gone.")
    p.add_argument("-o", "--output", type=Path, metavar="FILE",
                   help="where to write the private key (default: "
                   "$XDG_CONFIG_HOME/kernelkit/signing-key.pem)")
    p.add_argument("-C", "--comment", default="", help="a comment for the .pub file")
    p.add_argument("-f", "--force", action="store_true", help="replace an existing key")
    from kernelkit.cli.parser import add_json

    add_json(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kernelkit.settings import process_environ
    from kernelkit.signing.keys import default_key_path, generate_key, public_path

    path = args.output or default_key_path(process_environ())
    key = generate_key(path, comment=args.comment, force=args.force)
    if args.json:
        from kernelkit.cli import ui

        ui.emit_json({"path": str(path), "public": str(public_path(path)),
                      "fingerprint": key.fingerprint})
        return 0
    print(f"private key: {path}")
    print(f"public key:  {public_path(path)}")
    print(f"fingerprint: {key.fingerprint}")
    print("trust it in ~/.config/kernelkit/trust.toml (or $KERNELKIT_TRUST_POLICY):\n"
          f'  [orgs.<your-org>]\n  keys = ["{key.fingerprint}"]')
    return 0
