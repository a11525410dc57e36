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
