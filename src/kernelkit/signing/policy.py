"""The trust policy: per organisation, which identities may publish its kernels (pure).

A TOML file (``KERNELKIT_TRUST_POLICY``, default ``~/.config/kernelkit/trust.toml``)::

    require-signature = false      # true: an organisation not listed below may not publish
    revoked = ["ed25519:SHA256:..."]   # never accepted, for any organisation

    [orgs.acme]                     # kernels acme/* must be signed by one of these
    keys = ["ed25519:SHA256:OLD...", "ed25519:SHA256:NEW..."]   # rotation: list both
    revoked = []                    # this organisation's own revocations (optional)

    [[orgs.acme.sigstore]]          # upstream's sigstore bundles from GitHub workflows
    repository = "acme/kernels"     # the GitHub repository whose workflow signs
    workflows = ["https://github.com/acme/kernels/.github/workflows/build.yaml@refs/heads/main"]

An organisation listed here is always held to its identities. ``require-signature`` (or
``require_signature=True``, ``KERNELKIT_REQUIRE_SIGNED=1``) extends that to every organisation:
one that is not listed has no identity that may publish, so its kernels are refused.
:func:`judge` applies a policy to the signers :mod:`kernelkit.signing.verify` found.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, NamedTuple

from kernelkit.errors import InputFileError, SignatureError, SigningKeyError
from kernelkit.signing.keys import is_fingerprint
from kernelkit.signing.signers import Signer, Signers
from kernelkit.util.inputs import MAX_TOML_BYTES, parse_toml, read_input_text

GITHUB_ISSUER = "https://token.actions.githubusercontent.com"
SIGSTORE_PREFIX = "sigstore:"
_ORG = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,95}")
_GH_REPO = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9._-]+")
_HINT = "fix the trust policy file (docs/security.md, 'Signatures')"


class SigstoreIdentity(NamedTuple):
    """A GitHub workflow that may sign (upstream's ``GitHubWorkflowPolicy``)."""

    repository: str
    workflows: tuple[str, ...]
    issuer: str = GITHUB_ISSUER

    def matches(self, signer: Signer) -> bool:
        return (signer.claim("issuer") == self.issuer
                and signer.claim("source-repository") == f"https://github.com/{self.repository}"
                and signer.claim("build-signer") in self.workflows)

    def names(self) -> tuple[str, ...]:
        return tuple(SIGSTORE_PREFIX + w for w in self.workflows)


class OrgPolicy(NamedTuple):
    keys: tuple[str, ...] = ()
    sigstore: tuple[SigstoreIdentity, ...] = ()
    revoked: frozenset[str] = frozenset()

    def expected(self) -> tuple[str, ...]:
        return self.keys + tuple(n for s in self.sigstore for n in s.names())

    def accepts(self, signer: Signer) -> bool:
        if signer.identity.startswith(SIGSTORE_PREFIX):
            return any(s.matches(signer) for s in self.sigstore)
        return signer.identity in self.keys


class TrustPolicy(NamedTuple):
    """A parsed policy (a NamedTuple, as every value on the load path: cheap to define)."""

    source: str
    orgs: dict[str, OrgPolicy]
    revoked: frozenset[str] = frozenset()
    require_signature: bool = False

    def org(self, repo_id: str) -> OrgPolicy | None:
        return self.orgs.get(repo_id.split("/", 1)[0])

    def applies(self, repo_id: str, *, require: bool = False) -> bool:
        """Whether a kernel of ``repo_id`` must be signed (checked): its organisation is
        listed, or signatures are required of every kernel."""
        return require or self.require_signature or self.org(repo_id) is not None

    def is_revoked(self, identity: str, org: OrgPolicy | None) -> bool:
        return identity in self.revoked or (org is not None and identity in org.revoked)


EMPTY = TrustPolicy("(no trust policy)", {})


def is_identity(value: object) -> bool:
    """A key fingerprint or ``sigstore:https://...`` (what a lock records as a signer)."""
    return is_fingerprint(value) or (
        isinstance(value, str) and value.startswith(SIGSTORE_PREFIX + "https://")
        and len(value) <= 1000 and value.isprintable() and " " not in value)


# --- reading ------------------------------------------------------------------------------------


def read_policy(path: Path) -> TrustPolicy:
    try:
        text = read_input_text(path, MAX_TOML_BYTES)
        data = parse_toml(text, path)
    except (FileNotFoundError, NotADirectoryError):
        raise SigningKeyError(f"trust policy {path} does not exist",
                              hint="create it, or unset KERNELKIT_TRUST_POLICY") from None
    except InputFileError as exc:
        raise SigningKeyError(exc.message, hint=_HINT) from None
    return parse_policy(data, str(path))


def parse_policy(data: object, source: str) -> TrustPolicy:
    if not isinstance(data, dict):
        raise SigningKeyError(f"{source}: a trust policy is a table", hint=_HINT)
    _known(data, ("require-signature", "revoked", "orgs"), source)
    require = data.get("require-signature", False)
    if not isinstance(require, bool):
        raise _bad(source, "require-signature", "must be true or false")
    orgs = data.get("orgs", {})
    if not isinstance(orgs, dict):
        raise _bad(source, "orgs", "must be a table of organisations ([orgs.NAME])")
    parsed = {}
    for name, entry in orgs.items():
        if not _ORG.fullmatch(name):
            raise _bad(source, f"orgs.{name[:60]!r}", "is not an organisation name")
        parsed[name] = _org(entry, source, f"orgs.{name}")
    return TrustPolicy(source, parsed, frozenset(_identities(data.get("revoked", []), source,
                                                             "revoked")), require)


def _org(entry: object, source: str, where: str) -> OrgPolicy:
    if not isinstance(entry, dict):
        raise _bad(source, where, "must be a table")
    _known(entry, ("keys", "sigstore", "revoked"), source, where)
    keys = _identities(entry.get("keys", []), source, f"{where}.keys", keys_only=True)
    stores = entry.get("sigstore", [])
    if not isinstance(stores, list):
        raise _bad(source, f"{where}.sigstore", "must be an array of tables ([[...sigstore]])")
    sigstore = tuple(_sigstore(s, source, f"{where}.sigstore[{i}]") for i, s in enumerate(stores))
    if not keys and not sigstore:
        raise _bad(source, where, "lists no identity: add keys = [...] or a [[sigstore]] "
                                  "table (an organisation listed with none could never load)")
    return OrgPolicy(keys, sigstore,
                     frozenset(_identities(entry.get("revoked", []), source, f"{where}.revoked")))


def _sigstore(entry: object, source: str, where: str) -> SigstoreIdentity:
    if not isinstance(entry, dict):
        raise _bad(source, where, "must be a table")
    _known(entry, ("repository", "workflows", "issuer"), source, where)
    repo, flows = entry.get("repository"), entry.get("workflows")
    issuer = entry.get("issuer", GITHUB_ISSUER)
    if not isinstance(repo, str) or not _GH_REPO.fullmatch(repo):
        raise _bad(source, f"{where}.repository", "must be a GitHub repository 'owner/name'")
    prefix = f"https://github.com/{repo}/.github/workflows/"
    if not isinstance(flows, list) or not flows or not all(
            isinstance(w, str) and w.startswith(prefix) and "@" in w for w in flows):
        raise _bad(source, f"{where}.workflows", f"must list workflow URIs '{prefix}<file>@<ref>'")
    if not isinstance(issuer, str) or not issuer.startswith("https://"):
        raise _bad(source, f"{where}.issuer", "must be an https:// OIDC issuer URL")
    return SigstoreIdentity(repo, tuple(flows), issuer)


def _identities(value: object, source: str, where: str, *, keys_only: bool = False
                ) -> tuple[str, ...]:
    ok = is_fingerprint if keys_only else is_identity
    if not isinstance(value, list) or not all(ok(v) for v in value):
        what = ("key fingerprints 'ed25519:SHA256:<43 base64>'" if keys_only
                else "key fingerprints or 'sigstore:<workflow URI>'")
        raise _bad(source, where, f"must be a list of {what}")
    return tuple(value)


def _known(table: dict[str, Any], allowed: tuple[str, ...], source: str, where: str = "") -> None:
    for key in table:
        if key not in allowed:
            at = f"{where}." if where else ""
            raise _bad(source, f"{at}{str(key)[:60]}", "unknown field (expected "
                       f"{', '.join(allowed)})")


def _bad(source: str, field_name: str, what: str) -> SigningKeyError:
    return SigningKeyError(f"{source}: {field_name} {what}", hint=_HINT)


# --- judging ------------------------------------------------------------------------------------


class Verdict(NamedTuple):
    """What the policy says of a variant: ``signer`` the accepted identity (``None``: no policy
    applies and the variant loads as before), ``note`` the one line to log."""

    signer: str | None
    note: str


def judge(policy: TrustPolicy, signers: Signers, *, repo_id: str, variant: str,
          require: bool = False, locked_signer: str | None = None) -> Verdict:
    """Accept or refuse (``SignatureError``) the variant's signers.

    ``locked_signer`` (from ``kernels.lock.hashes``) must be among the verified signers,
    whatever the policy says; revocations apply to it too."""
    org = policy.org(repo_id)
    if locked_signer is not None:
        return _locked(policy, org, signers, repo_id, variant, locked_signer)
    if not policy.applies(repo_id, require=require):
        return Verdict(None, unchecked_note(signers.signed, repo_id, variant))
    expected = org.expected() if org is not None else ()
    accepted = [s for s in signers.valid
                if org is not None and org.accepts(s) and not policy.is_revoked(s.identity, org)]
    if accepted:
        return Verdict(accepted[0].identity,
                       f"kernel {repo_id} variant {variant}: signed by {accepted[0].identity}")
    reason, found = _why_refused(policy, org, signers, repo_id)
    raise SignatureError(kernel=repo_id, variant=variant, reason=reason, expected=expected,
                         found=found, hint=_refusal_hint(policy, org, repo_id))


def _locked(policy: TrustPolicy, org: OrgPolicy | None, signers: Signers, repo_id: str,
            variant: str, locked: str) -> Verdict:
    valid = signers.identities
    if locked in valid and not policy.is_revoked(locked, org):
        return Verdict(locked, f"kernel {repo_id} variant {variant}: signed by {locked} "
                               "(as locked)")
    reason, found = (("signed by revoked identity " + locked, locked)
                     if locked in valid else _why_refused(policy, org, signers, repo_id,
                                                          locked=True))
    raise SignatureError(kernel=repo_id, variant=variant, reason=reason, expected=(locked,),
                         found=found, hint="kernels.lock.hashes pins this signer: the variant "
                         "was re-signed, tampered with, or the key was revoked; re-run "
                         "`kernelkit lock` only if you trust the new signer")


def _why_refused(policy: TrustPolicy, org: OrgPolicy | None, signers: Signers, repo_id: str,
                 *, locked: bool = False) -> tuple[str, str]:
    revoked = [s.identity for s in signers.valid if policy.is_revoked(s.identity, org)]
    if revoked:
        return f"signed by revoked identity {revoked[0]}", revoked[0]
    if signers.valid:
        whom = ("the signer kernels.lock.hashes pins" if locked
                else f"an identity the trust policy accepts for '{repo_id.split('/')[0]}'")
        return (f"signed by {', '.join(signers.identities)}, not {whom}",
                signers.identities[0])
    if signers.invalid:
        return ("signature by " + signers.invalid[0] + " does not match metadata.json (changed "
                "after signing)", "invalid")
    if signers.problems:
        return signers.problems[0], "unreadable"
    if org is None and not locked:
        why = f"unsigned, and no identity may publish for '{repo_id.split('/')[0]}'"
        return why + " (signatures required)", "unsigned"
    return "unsigned", "unsigned"


def _refusal_hint(policy: TrustPolicy, org: OrgPolicy | None, repo_id: str) -> str:
    if org is None:
        return (f"add [orgs.{repo_id.split('/')[0]}] with the publisher's key fingerprints to "
                f"{policy.source} if you trust it, or load without require_signature")
    return ("nothing of it was imported; ask the publisher to sign it (`kernelkit sign`, "
            f"`kernelkit upload --sign`) or check the identities in {policy.source}")


def unchecked_note(signed: bool, repo_id: str, variant: str) -> str:
    """The one line logged for a kernel no policy applies to."""
    if not signed:
        return (f"kernel {repo_id} variant {variant} is unsigned (no trust policy applies; "
                "docs/security.md)")
    return (f"kernel {repo_id} variant {variant} carries a signature; not checked: no trust "
            "policy lists its organisation")


_CACHE: dict[str, tuple[tuple[int, int, int], TrustPolicy]] = {}


def cached_policy(path: Path) -> TrustPolicy:
    """:func:`read_policy`, parsed once per version of the file in a process (keyed by its
    inode, size and mtime): a warm load pays one ``stat``."""
    import os

    try:
        st = os.stat(path)
    except OSError:
        return read_policy(path)  # the error names the file
    key = (st.st_ino, st.st_size, st.st_mtime_ns)
    hit = _CACHE.get(str(path))
    if hit is not None and hit[0] == key:
        return hit[1]
    policy = read_policy(path)
    _CACHE[str(path)] = (key, policy)
    return policy
