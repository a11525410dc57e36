"""Publishers kernelkit's loader trusts without ``trust_remote_code=True``.

Upstream asks the Hugging Face Hub for an organisation's ``trustedKernelPublisher`` flag;
kernelkit has no such service for local or git hubs, so it trusts this fixed list plus
``KERNELKIT_TRUSTED_PUBLISHERS``. Here (not in the loader) so that ``kernelkit serve``'s pages,
which never import the loader, write usage lines that agree with it.
"""

from __future__ import annotations

DEFAULT_TRUSTED_PUBLISHERS: tuple[str, ...] = ("kernels-community",)
