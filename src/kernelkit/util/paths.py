"""Where kernelkit keeps things by default. Callers pass these in explicitly; only the
public entry points and the CLI call these functions (configuration comes in from the edge).
The variables are declared in ``kernelkit.settings``."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from kernelkit.settings import (
    CCACHE_DIR,
    KERNELKIT_CACHE,
    KERNELKIT_CCACHE,
    KERNELKIT_CCACHE_DIR,
    KERNELKIT_ENVS,
    KERNELKIT_HUB_DIR,
    XDG_CACHE_HOME,
    XDG_CONFIG_HOME,
    process_environ,
)


def user_cache_dir(env: Mapping[str, str] | None = None) -> Path:
    env = process_environ() if env is None else env
    return (XDG_CACHE_HOME.read(env) or Path.home() / ".cache") / "kernelkit"


def user_config_dir(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CONFIG_HOME/kernelkit`` (``~/.config/kernelkit`` when unset): the trust policy
    and the signing key live here by default."""
    env = process_environ() if env is None else env
    return (XDG_CONFIG_HOME.read(env) or Path.home() / ".config") / "kernelkit"


def default_hub_dir(env: Mapping[str, str] | None = None) -> Path:
    env = process_environ() if env is None else env
    return KERNELKIT_HUB_DIR.read(env) or user_cache_dir(env) / "hub"


def default_cache_dir(env: Mapping[str, str] | None = None) -> Path:
    env = process_environ() if env is None else env
    return KERNELKIT_CACHE.read(env) or user_cache_dir(env) / "kernels"


def default_envs_dir(env: Mapping[str, str] | None = None) -> Path:
    env = process_environ() if env is None else env
    return KERNELKIT_ENVS.read(env) or user_cache_dir(env) / "envs"


def default_compiler_cache_dir(env: Mapping[str, str] | None = None) -> Path | None:
    """The compiler cache (ccache) directory: ``KERNELKIT_CCACHE_DIR``, else ``CCACHE_DIR``,
    else ``~/.cache/kernelkit/ccache``; ``None`` when ``KERNELKIT_CCACHE=0`` turns it off."""
    env = process_environ() if env is None else env
    if not KERNELKIT_CCACHE.read(env):
        return None
    return KERNELKIT_CCACHE_DIR.read(env) or CCACHE_DIR.read(env) or user_cache_dir(env) / "ccache"
