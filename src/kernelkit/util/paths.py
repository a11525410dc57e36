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
    return Path(env["KERNELKIT_HUB_DIR"]) if env.get("KERNELKIT_HUB_DIR") else user_cache_dir(env) / "hub"


def default_cache_dir(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    return Path(env["KERNELKIT_CACHE"]) if env.get("KERNELKIT_CACHE") else user_cache_dir(env) / "kernels"


def default_envs_dir(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    return Path(env["KERNELKIT_ENVS"]) if env.get("KERNELKIT_ENVS") else user_cache_dir(env) / "envs"
