"""The public loaders with ``build_missing``: ``kernelkit.get_kernel`` & co.

Each is the loader's function (``kernelkit.loader.api``, ``kernelkit.lock.api``) with one more
keyword, ``build_missing`` (default: ``KERNELKIT_BUILD_MISSING``, read here, at the edge). On,
it passes the loader a :class:`~kernelkit.source_build.provider.SourceBuild`, which the loader
asks only when no published variant fits; off, the call is exactly the loader's. This module
imports nothing heavy: the builder and the checker are imported by the provider when a build
really starts, so ``import kernelkit; kernelkit.get_kernel`` stays as light as the loader.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from kernelkit.loader import api as loader_api
from kernelkit.settings import KERNELKIT_BUILD_MISSING, process_environ

if TYPE_CHECKING:
    from kernelkit.hub.port import Hub
    from kernelkit.source_build.provider import SourceBuild

__all__ = ["get_kernel", "get_locked_kernel", "install_kernel", "load_kernel",
           "source_build_provider"]


def source_build_provider(build_missing: bool | None, *,
                          trust_remote_code: bool | Sequence[str] | None = None
                          ) -> SourceBuild | None:
    """The provider for ``build_missing`` (``None``: ``KERNELKIT_BUILD_MISSING``), or ``None``
    when the fallback is off. ``trust_remote_code`` given: the provider checks the publisher's
    trust itself before building (``install_kernel``, which has no trust check of its own)."""
    env = dict(process_environ())
    if not (build_missing if build_missing is not None else KERNELKIT_BUILD_MISSING.read(env)):
        return None
    from kernelkit.source_build.provider import SourceBuild

    if trust_remote_code is None:
        return SourceBuild(env)
    from kernelkit.loader.settings import read_settings
    from kernelkit.loader.trust import check_trust

    trusted = read_settings(env).trusted_publishers
    return SourceBuild(env, trust=lambda repo: check_trust(repo, trust_remote_code, trusted))


def get_kernel(
    repo_id: str,
    revision: str | None = None,
    version: int | str | None = None,
    backend: str | None = None,
    user_agent: str | dict[str, str] | None = None,
    trust_remote_code: bool | Sequence[str] = False,
    *,
    check_arch: bool = True,
    hub: Hub | None = None,
    cache_dir: Path | None = None,
    require_signature: bool | None = None,
    build_missing: bool | None = None,
) -> ModuleType:
    """Load a kernel from the hub (``kernelkit.loader.api.get_kernel``: every argument as there,
    upstream's signature; ``require_signature`` as there). ``build_missing`` (default
    ``KERNELKIT_BUILD_MISSING``): when no published variant fits this machine, build it here
    from the sources published with the resolved commit (verified against their digest), check
    it, cache it, load it; the publisher must be trusted as for any load. Off, that case raises
    ``VariantNotFoundError``."""
    return loader_api.get_kernel(
        repo_id, revision, version, backend, user_agent, trust_remote_code,
        check_arch=check_arch, hub=hub, cache_dir=cache_dir, require_signature=require_signature,
        variant_provider=source_build_provider(build_missing))


def install_kernel(
    repo_id: str,
    *,
    revision: str | None = None,
    version: int | str | None = None,
    local_files_only: bool = False,
    backend: str | None = None,
    hub: Hub | None = None,
    cache_dir: Path | None = None,
    build_missing: bool | None = None,
    trust_remote_code: bool | Sequence[str] = False,
) -> Path:
    """``kernelkit.loader.api.install_kernel`` with ``build_missing`` as for
    :func:`get_kernel`. A build runs the kernel's code (the check imports it), so it needs the
    publisher trusted (``trust_remote_code``), as ``get_kernel`` does; a download does not."""
    return loader_api.install_kernel(
        repo_id, revision=revision, version=version, local_files_only=local_files_only,
        backend=backend, hub=hub, cache_dir=cache_dir,
        variant_provider=source_build_provider(build_missing,
                                               trust_remote_code=trust_remote_code))


def get_locked_kernel(repo_id: str, *, lockfile: Path | str | None = None,
                      backend: str | None = None, check_arch: bool = True,
                      trust_remote_code: bool | list[str] = False, hub: Hub | None = None,
                      cache_dir: Path | None = None, require_signature: bool | None = None,
                      build_missing: bool | None = None) -> ModuleType:
    """``kernelkit.lock.api.get_locked_kernel`` (``require_signature`` as there; a signer the
    lock records is always required); ``build_missing`` as for :func:`get_kernel`,
    from the sources digest the lock pins only (``kernels.lock.hashes``)."""
    from kernelkit.lock.api import get_locked_kernel as locked

    return locked(repo_id, lockfile=lockfile, backend=backend, check_arch=check_arch,
                  trust_remote_code=trust_remote_code, hub=hub, cache_dir=cache_dir,
                  require_signature=require_signature,
                  variant_provider=source_build_provider(build_missing))


def load_kernel(repo_id: str, *, lockfile: Path | str | None, backend: str | None = None,
                check_arch: bool = True, cache_dir: Path | None = None,
                require_signature: bool | None = None,
                build_missing: bool | None = None) -> ModuleType:
    """``kernelkit.lock.api.load_kernel`` (no hub; ``require_signature`` as there):
    ``build_missing`` builds from the sources the lock pins, which must be in the cache (a
    ``kernelkit download --build-missing`` or an earlier build put them there)."""
    from kernelkit.lock.api import load_kernel as locked

    return locked(repo_id, lockfile=lockfile, backend=backend, check_arch=check_arch,
                  cache_dir=cache_dir, require_signature=require_signature,
                  variant_provider=source_build_provider(build_missing))
