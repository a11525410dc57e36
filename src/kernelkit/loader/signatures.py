"""Signatures at load time: the trust policy applied to a verified variant, before any of it
is imported (``kernelkit.signing``; docs/security.md, "Signatures").

A download records the hub's ``build/<variant>.kksig`` next to the variant in the cache
(``build/.<variant>.kksig``; empty: the hub had none at that commit), so offline loads know
what was published. Where no policy applies (the kernel's organisation is not in the trust
policy and signatures are not required) nothing is verified: one ``INFO`` line on the
``kernelkit.signing`` logger says whether the kernel carries a signature. Where one applies,
the signatures are verified (``cryptography``, ``sigstore``) and the result remembered in
``build/.<variant>.sigcheck``, keyed by the SHA-256 of ``metadata.json`` and both signature
files: a warm load reads three small files and imports no cryptography. The policy itself is
judged on every load (it may have changed: a key revoked since).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from kernelkit.loader.owned import read_owned, write_owned
from kernelkit.loader.sigrecord import record_path, record_signature

if TYPE_CHECKING:
    from kernelkit.hub.port import Hub
    from kernelkit.loader.install import LazyHub
    from kernelkit.loader.settings import Settings
    from kernelkit.signing.signers import Signers

log = logging.getLogger("kernelkit.signing")
CHECK_FORMAT = 1
_noted: set[str] = set()


def check_path(variant_dir: Path) -> Path:
    return variant_dir.parent / f".{variant_dir.name}.sigcheck"


def check_signature(variant_dir: Path, repo_id: str, *, settings: Settings,
                    require: bool | None = None, locked_signer: str | None = None,
                    hub: LazyHub | None = None, commit: str | None = None) -> str | None:
    """Apply the trust policy to ``variant_dir`` (``SignatureError`` if it refuses); return the
    accepted signer identity, ``None`` when no policy applies. ``locked_signer``: the identity
    ``kernels.lock.hashes`` pins for this variant. ``hub`` and ``commit`` fetch a signature file
    a cache written by an older kernelkit lacks (online only)."""
    require_all = settings.require_signed if require is None else require
    policy = settings.trust_policy()
    sigfile_raw = _sigfile(variant_dir, repo_id, hub, commit, offline=settings.offline)
    bundle = variant_dir / "metadata.json.sigstore"
    if locked_signer is None and not require_all and (
            policy is None or not policy.applies(repo_id)):
        _note_once(variant_dir, repo_id, signed=bool(sigfile_raw) or bundle.is_file())
        return None
    from kernelkit.artifact.metadata import read_bytes
    from kernelkit.signing.policy import EMPTY, judge

    metadata_raw = read_bytes(variant_dir / "metadata.json")
    bundle_raw = read_owned(bundle)
    signers = _signers(variant_dir, metadata_raw, sigfile_raw or None, bundle_raw, settings)
    verdict = judge(policy or EMPTY, signers, repo_id=repo_id, variant=variant_dir.name,
                    require=require_all, locked_signer=locked_signer)
    log.debug("%s", verdict.note)
    return verdict.signer


def _sigfile(variant_dir: Path, repo_id: str, hub: LazyHub | None, commit: str | None, *,
             offline: bool) -> bytes | None:
    """The recorded signature file (``b""``: none was published); ``None`` when nothing was
    recorded and it cannot be asked for now."""
    raw = read_owned(record_path(variant_dir))
    if raw is None and hub is not None and commit is not None and not offline:
        record_signature(hub.get(), repo_id, commit, variant_dir)
        raw = read_owned(record_path(variant_dir))
    return raw


def _note_once(variant_dir: Path, repo_id: str, *, signed: bool) -> None:
    key = str(variant_dir)
    if key in _noted:
        return
    _noted.add(key)
    if signed:
        log.info("kernel %s variant %s carries a signature; not checked: no trust policy "
                 "lists its organisation", repo_id, variant_dir.name)
    else:
        log.info("kernel %s variant %s is unsigned (no trust policy applies; "
                 "docs/security.md)", repo_id, variant_dir.name)


def _signers(variant_dir: Path, metadata_raw: bytes, sigfile_raw: bytes | None,
             bundle_raw: bytes | None, settings: Settings) -> Signers:
    """The verified signers, from the remembered check when it is for these very bytes."""
    from kernelkit.signing.verify import material_digest

    material = material_digest(metadata_raw, sigfile_raw, bundle_raw)
    remembered = _remembered(check_path(variant_dir), material)
    if remembered is not None:
        return remembered
    signers = verify_signers(metadata_raw, sigfile_raw, bundle_raw, settings)
    data = {"format": CHECK_FORMAT, "material": material, "signers": signers.to_json()}
    write_owned(check_path(variant_dir), json.dumps(data, separators=(",", ":")).encode())
    return signers


def verify_signers(metadata_raw: bytes, sigfile_raw: bytes | None, bundle_raw: bytes | None,
                   settings: Settings) -> Signers:
    """Check every signature (no cache)."""
    from kernelkit.signing.verify import collect

    return collect(metadata_raw, sigfile_raw=sigfile_raw, bundle_raw=bundle_raw,
                   trusted_root=settings.sigstore_trusted_root)


def _remembered(path: Path, material: str) -> Signers | None:
    from kernelkit.signing.signers import Signers

    raw = read_owned(path)
    try:
        data = json.loads(raw) if raw is not None else None
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("format") != CHECK_FORMAT \
            or data.get("material") != material:
        return None
    return Signers.from_json(data.get("signers"))


# --- `kernelkit verify-signature` ----------------------------------------------------------------


class VariantSignature(NamedTuple):
    """One variant's signatures, fully verified (nothing remembered is used)."""

    variant: str
    ok: bool
    signers: tuple[str, ...]  # identities whose signature verified
    message: str
    signed: bool = True


def verify_kernel_signatures(repo_id: str, *, revision: str | None = None,
                             version: int | str | None = None, all_variants: bool = False,
                             backend: str | None = None, hub: Hub | None = None,
                             cache_dir: Path | None = None) -> tuple[str, list[VariantSignature]]:
    """Download this machine's variant (or every variant) of the resolved commit, verify its
    digest and signatures and apply the trust policy; ``(commit, one result per variant)``.
    With neither ``revision`` nor ``version``: the newest major version, else ``main`` (as
    ``kernelkit info``). Where no policy applies, a valid signature is reported with its
    signer, not judged."""
    from kernelkit.errors import VariantNotFoundError
    from kernelkit.loader.cache import RepoCache
    from kernelkit.loader.install import LazyHub, ensure_variant
    from kernelkit.loader.resolve import newest_request, resolve_in
    from kernelkit.loader.settings import read_settings
    from kernelkit.variants.choose import best_variant, rank_variants
    from kernelkit.variants.host import detect_system

    settings = read_settings(cache_dir=cache_dir)
    system = detect_system(backend)
    lazy = LazyHub(hub, settings.open_hub, settings.refs_stamp)
    rc = RepoCache.of(settings.cache_dir, repo_id, settings.hub_identity(hub))
    if revision is None and version is None:
        revision, version = newest_request(lazy, rc, offline=settings.offline)
    resolved = resolve_in(lazy, rc, revision, version, offline=settings.offline)
    names = list(resolved.variants)
    if not all_variants:
        best = best_variant(rank_variants(names, system))
        if best is None:
            raise VariantNotFoundError(resolved.repo_id, resolved.label, [],
                                       system=system.describe())
        names = [best]
    out = []
    for name in sorted(names):
        vdir = ensure_variant(lazy, resolved.cache, resolved.commit, name,
                              offline=settings.offline)
        out.append(_judged(vdir, resolved.repo_id, settings, lazy, resolved.commit))
    return resolved.commit, out


def _judged(variant_dir: Path, repo_id: str, settings: Settings, hub: LazyHub,
            commit: str) -> VariantSignature:
    from kernelkit.artifact.metadata import read_bytes
    from kernelkit.errors import SignatureError
    from kernelkit.signing.policy import judge

    sigfile = _sigfile(variant_dir, repo_id, hub, commit, offline=settings.offline) or None
    signers = verify_signers(read_bytes(variant_dir / "metadata.json"), sigfile,
                             read_owned(variant_dir / "metadata.json.sigstore"), settings)
    name = variant_dir.name
    from kernelkit.signing.policy import EMPTY

    policy = settings.trust_policy() or EMPTY
    if policy.applies(repo_id, require=settings.require_signed):
        try:
            verdict = judge(policy, signers, repo_id=repo_id, variant=name,
                            require=settings.require_signed)
        except SignatureError as exc:
            return VariantSignature(name, False, signers.identities, exc.message,
                                    signers.signed)
        return VariantSignature(name, True, signers.identities,
                                f"signed by {verdict.signer}, accepted by {policy.source}")
    if signers.valid and not signers.invalid and not signers.problems:
        return VariantSignature(name, True, signers.identities,
                                f"signed by {', '.join(signers.identities)} (no trust policy "
                                "lists its organisation: the signer was not judged)")
    if not signers.signed:
        return VariantSignature(name, False, (), "unsigned", signed=False)
    why = (signers.problems[0] if signers.problems
           else f"signature by {signers.invalid[0]} does not match metadata.json")
    return VariantSignature(name, False, signers.identities, why)
