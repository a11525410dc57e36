"""Signed kernels: who built a variant, checked before any of it runs (docs/security.md).

Two kinds of signature over a variant's ``metadata.json`` (whose digest covers every file):

* kernelkit's offline signatures (``keys.py``, ``sigfile.py``, ``sign.py``): Ed25519 keys named
  by a fingerprint (``ed25519:SHA256:<base64>``), the signatures in ``build/<variant>.kksig``
  beside the variant directory (inside it, upstream's digest check would refuse the variant as
  having an unknown file);
* upstream's sigstore bundles (``sigstore_bundle.py``): ``build/<variant>/metadata.json.sigstore``,
  verified with the optional ``sigstore`` package against GitHub workflow identities.

``verify.py`` turns either into the identities that really signed; ``policy.py`` (the trust
policy file, pure) decides whether those may publish for the repository's organisation.
``cryptography`` and ``sigstore`` are imported only when a signature is made or checked.
"""
