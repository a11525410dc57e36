"""Publisher trust (upstream-loader.md §2.8): kernels run arbitrary code at import.

A kernel from a publisher (the ``org`` of ``org/name``) that is not trusted needs
``trust_remote_code=True``. Trusted publishers are ``DEFAULT_TRUSTED_PUBLISHERS`` plus the
comma-separated ``KERNELKIT_TRUSTED_PUBLISHERS``. Local paths and ``LOCAL_KERNELS`` are exempt.
Unlike upstream (which asks the Hugging Face Hub), the check is local, so it also runs offline.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

from kernelkit.errors import TrustError


def check_trust(repo_id: str, trust_remote_code: bool | Sequence[str],
                trusted_publishers: Sequence[str]) -> None:
    if trust_remote_code is True:
        return
    if isinstance(trust_remote_code, (list, tuple)):
        warnings.warn(
            "trust_remote_code as a list of signing identities is not implemented yet; "
            "falling back to the trusted-publisher check",
            UserWarning,
            stacklevel=3,
        )
    org = repo_id.split("/", 1)[0]
    if org in trusted_publishers:
        return
    raise TrustError(
        f"Kernel repository '{repo_id}' is not from a trusted publisher "
        f"(trusted: {', '.join(trusted_publishers) or 'none'}). Loading it runs its code.",
        hint=f"if you trust it, pass trust_remote_code=True, or add '{org}' to the "
             "comma-separated KERNELKIT_TRUSTED_PUBLISHERS environment variable",
    )
