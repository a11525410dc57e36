"""The hub for commands that need it: refused while offline mode is on.

``versions``, ``info``, ``download`` and ``lock`` ask the hub; with ``KERNELKIT_OFFLINE`` or
``HF_HUB_OFFLINE`` set they must not quietly go online (loading from the cache stays offline).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from kernelkit.errors import OfflineError

if TYPE_CHECKING:
    from kernelkit.hub.port import Hub


def open_online_hub(spec: str | Path | None, command: str) -> Hub:
    from kernelkit.hub import open_hub
    from kernelkit.loader.settings import read_settings

    settings = read_settings()
    if settings.offline:
        raise OfflineError(
            f"`kernelkit {command}` needs the hub, and offline mode is on "
            "(KERNELKIT_OFFLINE/HF_HUB_OFFLINE)",
            hint="unset KERNELKIT_OFFLINE and HF_HUB_OFFLINE to go online; loading kernels "
                 "from the cache works offline",
        )
    hub: Hub = open_hub(spec)
    return settings.watch_fetches(hub)
