"""Hub port and backends (see ``port.py``); :func:`open_hub` picks a backend from a spec."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kernelkit.errors import HubError
from kernelkit.hub.hubid import classify, identity_of
from kernelkit.settings import HF_TOKEN, process_environ
from kernelkit.util.paths import default_cache_dir

if TYPE_CHECKING:
    from kernelkit.hub.port import FileEntry, Hub, Refs

__all__ = ["FileEntry", "Hub", "Refs", "identity_of", "open_hub"]


def __getattr__(name: str) -> Any:
    """``FileEntry``, ``Hub`` and ``Refs`` on first use: the port's Protocol and dataclasses
    cost ~3 ms to define, and a warm load only needs ``hubid`` from this package."""
    if name in ("FileEntry", "Hub", "Refs"):
        from kernelkit.hub import port

        return getattr(port, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def open_hub(spec: str | Path | None = None, *, env: Mapping[str, str] | None = None) -> Hub:
    """The hub named by ``spec``:

    * ``None``: ``$KERNELKIT_HUB`` if set, else the directory ``$KERNELKIT_HUB_DIR``, else
      ``~/.cache/kernelkit/hub``;
    * a directory path: :class:`~kernelkit.hub.local.LocalGitHub` (created on first publish);
    * ``git+<url>`` (``git+file:///srv/kernels``, ``git+ssh://host/kernels``) or a URL ending in
      ``.git`` (``https://host/{org}/{name}.git``): :class:`~kernelkit.hub.git_remote.GitRemoteHub`
      with its mirrors in ``$KERNELKIT_CACHE``;
    * ``hf``, ``hf://`` or ``hf://<endpoint host>``: the Hugging Face Hub
      (``HF_TOKEN``/``HF_ENDPOINT`` from ``env``).
    """
    env = process_environ() if env is None else env
    kind, value = classify(spec, env)
    if kind == "hf":
        from kernelkit.hub.hf import HuggingFaceHub

        return HuggingFaceHub(token=HF_TOKEN.read(env), endpoint=value or None)
    if kind == "git":
        from kernelkit.hub.git_remote import GitRemoteHub

        return GitRemoteHub(value, default_cache_dir(env))
    return _local(Path(value))


def _local(path: Path) -> Hub:
    from kernelkit.hub.local import LocalGitHub

    if path.exists() and not path.is_dir():
        raise HubError(f"hub directory {path} is a file", hint="pass a directory with --hub")
    return LocalGitHub(path)
