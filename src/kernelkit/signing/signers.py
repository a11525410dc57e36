"""Who signed a ``metadata.json``, as values (``NamedTuple``: cheap on the load path): the
result of ``signing/verify.py`` and ``signing/sigstore_bundle.py``, judged by
``signing/policy.py``. A module of its own so the verifiers import it without importing
each other."""

from __future__ import annotations

from typing import NamedTuple


class Signer(NamedTuple):
    """A verified signature: ``identity`` is a key fingerprint (``ed25519:SHA256:...``) or
    ``sigstore:<workflow URI>``; ``claims`` the sigstore certificate's OIDC claims."""

    identity: str
    claims: tuple[tuple[str, str], ...] = ()

    def claim(self, name: str) -> str | None:
        return dict(self.claims).get(name)

    def to_json(self) -> dict[str, object]:
        return {"identity": self.identity, "claims": dict(self.claims)}


class Signers(NamedTuple):
    """Every signature of one ``metadata.json``, checked."""

    valid: tuple[Signer, ...] = ()
    invalid: tuple[str, ...] = ()  # identities whose signature does not verify
    problems: tuple[str, ...] = ()  # signature material that cannot be read

    @property
    def signed(self) -> bool:
        return bool(self.valid or self.invalid or self.problems)

    @property
    def identities(self) -> tuple[str, ...]:
        return tuple(s.identity for s in self.valid)

    def to_json(self) -> dict[str, object]:
        return {"valid": [s.to_json() for s in self.valid], "invalid": list(self.invalid),
                "problems": list(self.problems)}

    @classmethod
    def from_json(cls, data: object) -> Signers | None:
        """The value :meth:`to_json` wrote, or ``None`` for anything else."""
        if not isinstance(data, dict):
            return None
        try:
            valid = tuple(Signer(str(s["identity"]),
                                 tuple(sorted((str(k), str(v)) for k, v in s["claims"].items())))
                          for s in data["valid"])
            return cls(valid, tuple(str(i) for i in data["invalid"]),
                       tuple(str(p) for p in data["problems"]))
        except (KeyError, TypeError, AttributeError):
            return None
