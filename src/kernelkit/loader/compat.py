"""Which upstream ``kernels`` loader kernelkit's loader stands for, and the ``kernels-minver``
check (upstream's ``MinverValidator``).

A build's ``metadata.json`` may say ``"kernels-minver": "x.y.z"``: the oldest upstream
``kernels`` release that may load it (a newer builder uses a format an older loader misreads).
kernelkit versions itself independently of upstream, so it compares the kernel's requirement
with :data:`KERNELS_COMPAT_VERSION`, the upstream release whose loader behaviour and formats
this kernelkit implements (docs/compatibility.md): a kernel that requires more is refused before
anything of it is imported, as upstream 0.19.1 refuses it.
"""

from __future__ import annotations

from pathlib import Path

from kernelkit.artifact.metadata import Metadata
from kernelkit.errors import LoaderTooOldError

#: the upstream ``kernels`` release this kernelkit's loader implements (raise it together with
#: the behaviour it names, and say so in docs/compatibility.md)
KERNELS_COMPAT_VERSION: tuple[int, int, int] = (0, 19, 1)


def dotted(version: tuple[int, ...]) -> str:
    return ".".join(str(p) for p in version)


def check_kernels_minver(metadata: Metadata, variant_dir: Path) -> None:
    """``LoaderTooOldError`` when ``metadata`` requires a newer loader than this one."""
    required = metadata.kernels_minver
    if required is not None and required > KERNELS_COMPAT_VERSION:
        raise LoaderTooOldError(kernel=metadata.name, variant=variant_dir.name,
                                required=dotted(required),
                                implemented=dotted(KERNELS_COMPAT_VERSION))
