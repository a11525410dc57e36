"""The fallback's setting, read at the edge: ``KERNELKIT_BUILD_MISSING``."""

from __future__ import annotations

import os
from collections.abc import Mapping

_TRUE = {"1", "true", "yes", "on"}


def build_missing_enabled(env: Mapping[str, str] | None = None) -> bool:
    """Whether ``KERNELKIT_BUILD_MISSING`` turns the build-from-source fallback on (``1``,
    ``true``, ``yes``, ``on``)."""
    value = (os.environ if env is None else env).get("KERNELKIT_BUILD_MISSING", "")
    return value.strip().lower() in _TRUE
