"""Where kernelkit keeps things by default. Callers pass these in explicitly; only the
public entry points and the CLI call these functions (configuration comes in from the edge)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def user_cache_dir(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    base = env.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kernelkit"


def default_hub_dir(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    if env.get("KERNELKIT_HUB_DIR"):
        return Path(env["KERNELKIT_HUB_DIR"])
    return user_cache_dir(env) / "hub"


def default_cache_dir(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    if env.get("KERNELKIT_CACHE"):
        return Path(env["KERNELKIT_CACHE"])
    return user_cache_dir(env) / "kernels"


def default_envs_dir(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    if env.get("KERNELKIT_ENVS"):
        return Path(env["KERNELKIT_ENVS"])
    return user_cache_dir(env) / "envs"


def default_compiler_cache_dir(env: Mapping[str, str] | None = None) -> Path | None:
    """The compiler cache (ccache) directory: ``KERNELKIT_CCACHE_DIR``, else ``CCACHE_DIR``,
    else ``~/.cache/kernelkit/ccache``; ``None`` when ``KERNELKIT_CCACHE=0`` turns it off."""
    env = os.environ if env is None else env
    if env.get("KERNELKIT_CCACHE", "").strip().lower() in ("0", "false", "no", "off"):
        return None
    for var in ("KERNELKIT_CCACHE_DIR", "CCACHE_DIR"):
        if env.get(var):
            return Path(env[var])
    return user_cache_dir(env) / "ccache"
