"""The signer of each locked variant, recorded by ``kernelkit lock`` in ``kernels.lock.hashes``.

From the same hub listing the hashes come from: a variant with ``build/<variant>.kksig`` or
``build/<variant>/metadata.json.sigstore`` has its ``metadata.json`` and signature read (a few
small files, nothing else downloaded) and verified. Where the trust policy applies to the
kernel it must accept the signer (``SignatureError`` otherwise: nothing is locked); elsewhere
the first valid signature's identity is recorded. A variant without a valid signature records
none, and loads as it did before it was locked.
"""

from __future__ import annotations

from collections.abc import Iterable

from kernelkit.hub.port import FileEntry, Hub
from kernelkit.loader.settings import Settings


def locked_signers(hub: Hub, repo_id: str, commit: str, entries: Iterable[FileEntry],
                   variants: Iterable[str], settings: Settings) -> dict[str, str]:
    """``{variant: signer identity}`` for the variants that carry an acceptable signature."""
    from kernelkit.signing.policy import EMPTY, judge
    from kernelkit.signing.sigfile import hub_path
    from kernelkit.signing.signers import Signers
    from kernelkit.signing.verify import collect

    paths = {e.path for e in entries}
    policy = settings.trust_policy() or EMPTY
    applies = policy.applies(repo_id, require=settings.require_signed)
    out: dict[str, str] = {}
    for variant in variants:
        has_sig = hub_path(variant) in paths
        has_bundle = f"build/{variant}/metadata.json.sigstore" in paths
        signers = Signers()
        if has_sig or has_bundle:
            metadata = hub.read_file(repo_id, commit, f"build/{variant}/metadata.json") or b""
            signers = collect(
                metadata,
                sigfile_raw=hub.read_file(repo_id, commit, hub_path(variant)) if has_sig else None,
                bundle_raw=(hub.read_file(repo_id, commit,
                                          f"build/{variant}/metadata.json.sigstore")
                            if has_bundle else None),
                trusted_root=settings.sigstore_trusted_root)
        if applies:
            signer = judge(policy, signers, repo_id=repo_id, variant=variant,
                           require=settings.require_signed).signer
        else:
            signer = signers.identities[0] if signers.valid else None
        if signer is not None:
            out[variant] = signer
    return out
