"""Stable hub identities: which hub a cached ref or commit came from.

The loader keys its cache by (hub identity, repository id): which commit ``v1`` means, and
whether a hub's content is trusted, are per hub. The identity is a plain string computed from
the hub's settings alone, never from a network call, so offline mode (``KERNELKIT_HUB``,
``KERNELKIT_HUB_DIR``, ``HF_ENDPOINT``) derives the same one the online load recorded:

* a directory hub: ``local:<resolved absolute path>``;
* a git remote: ``git:<url>`` without a ``git+`` prefix, credentials or trailing ``/``;
* the Hugging Face Hub (or ``kernelkit serve``): ``hf:<endpoint>``, the endpoint being
  ``HF_ENDPOINT`` or ``https://huggingface.co``, without a trailing ``/``.

:func:`classify` is the one parser of hub specs (``open_hub`` uses it too), so a spec and the
hub it opens always agree on the identity. Light imports: the loader's warm path uses this.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from kernelkit.errors import HubError
from kernelkit.settings import HF_ENDPOINT, KERNELKIT_HUB
from kernelkit.util.paths import default_hub_dir
from kernelkit.util.urls import redact_url, split_credentials

DEFAULT_HF_ENDPOINT = "https://huggingface.co"
REMOTE_SCHEMES = ("file://", "ssh://", "https://", "http://", "git://")

HubKind = Literal["local", "git", "hf"]


def classify(spec: str | Path | None, env: Mapping[str, str]) -> tuple[HubKind, str]:
    """``(kind, value)`` of a hub spec (see ``kernelkit.hub.open_hub``): a directory path, a git
    URL, or the Hugging Face endpoint (``""`` when none is set: the client's default)."""
    if spec is None or spec == "":
        spec = KERNELKIT_HUB.read(env) or default_hub_dir(env)
    if isinstance(spec, Path):
        return "local", str(spec)
    text = str(spec)
    if text == "hf" or text.startswith("hf://"):
        rest = text[len("hf://"):].strip("/") if text.startswith("hf://") else ""
        endpoint = f"https://{rest}" if rest else HF_ENDPOINT.read(env) or ""
        return "hf", check_endpoint(endpoint, spec_name=text if rest else "HF_ENDPOINT")
    if text.startswith("git+") or (text.startswith(REMOTE_SCHEMES) and text.endswith(".git")):
        return "git", text
    if "://" in text:
        raise HubError(f"unsupported hub {redact_url(text)!r}",
                       hint="use a directory, git+<url> (e.g. git+ssh://host/kernels) or hf")
    return "local", str(Path(text).expanduser())


def check_endpoint(endpoint: str, *, spec_name: str = "HF_ENDPOINT") -> str:
    """``endpoint`` if it is an http(s) URL with a host (or ``""``: the client's default);
    else ``HubError`` naming where it came from, before any client sees it."""
    if not endpoint:
        return endpoint
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(endpoint)
        ok = (parts.scheme in ("http", "https") and bool(parts.hostname)
              and endpoint.isprintable() and " " not in endpoint)
        parts.port  # noqa: B018 (raises ValueError for a port that is not a number)
    except ValueError:
        ok = False
    if not ok:
        raise HubError(f"invalid Hugging Face Hub endpoint {endpoint[:200]!r} ({spec_name})",
                       hint="use an http(s) URL such as https://huggingface.co, or "
                            "http://127.0.0.1:8080 for `kernelkit serve`; or unset HF_ENDPOINT")
    return endpoint


def local_identity(root: Path | str) -> str:
    return "local:" + str(Path(os.path.abspath(Path(root).expanduser())).resolve())


def git_identity(url: str) -> str:
    """``git:<url>`` without credentials: who connects does not change which hub it is, and
    an identity is shown and hashed into cache paths, so it never holds a secret."""
    url = url[len("git+"):] if url.startswith("git+") else url
    return "git:" + split_credentials(url)[0].rstrip("/")


def hf_identity(endpoint: str | None) -> str:
    return "hf:" + split_credentials(endpoint or DEFAULT_HF_ENDPOINT)[0].rstrip("/")


def identity_of(spec: str | Path | None, env: Mapping[str, str]) -> str:
    """The identity of the hub ``open_hub(spec, env=env)`` would open, without opening it."""
    kind, value = classify(spec, env)
    if kind == "local":
        return local_identity(value)
    return git_identity(value) if kind == "git" else hf_identity(value or None)


def settings_for(identity: str) -> dict[str, str]:
    """The environment settings that make a hub of ``identity`` the configured one (what a
    hint tells a person to set): ``KERNELKIT_HUB`` (and ``HF_ENDPOINT`` for another Hub API
    endpoint than huggingface.co)."""
    kind, _, value = identity.partition(":")
    if kind == "local":
        return {"KERNELKIT_HUB": value}
    if kind == "git":
        return {"KERNELKIT_HUB": "git+" + value}
    if value.rstrip("/") == DEFAULT_HF_ENDPOINT.rstrip("/"):
        return {"KERNELKIT_HUB": "hf"}
    return {"KERNELKIT_HUB": "hf", "HF_ENDPOINT": value}
