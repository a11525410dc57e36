"""``KernelizeFallback``: in which cases ``kernelize`` keeps a layer's original forward instead
of raising (upstream 0.19 names and values).

``use_fallback=True`` is ``DEFAULT`` (every "no fitting kernel" case falls back, a kernel that
fails to load raises); ``False`` is ``NONE``; ``ALL`` also falls back when the kernel cannot be
loaded (``CANNOT_LOAD``: no variant for this machine, not in the cache while offline, files
missing). A refused kernel (integrity, trust, ``kernels-minver``, ``check_arch``) always raises.
"""

from __future__ import annotations

from enum import Flag, auto

from kernelkit.layers.mapping import Miss


class KernelizeFallback(Flag):
    """Cases in which ``kernelize`` may keep the original layer forward.

    * ``NONE``: raise instead of falling back;
    * ``NO_LAYER``: no kernel mapping for the layer name;
    * ``NO_DEVICE``: the layer has no mapping for the device type;
    * ``NO_COMPATIBLE_PROPERTIES``: no mapping covers the device's capability;
    * ``NO_COMPATIBLE_MODE``: no repository, or not the loaded kernel layer, supports the mode
      (e.g. ``Mode.TRAINING`` and a layer with ``has_backward = False``);
    * ``CANNOT_LOAD``: the kernel could not be loaded;
    * ``DEFAULT``: all of the above but ``CANNOT_LOAD`` (``use_fallback=True``);
    * ``ALL``: every case.
    """

    NONE = 0
    NO_LAYER = auto()
    NO_DEVICE = auto()
    NO_COMPATIBLE_PROPERTIES = auto()
    NO_COMPATIBLE_MODE = auto()
    CANNOT_LOAD = auto()

    DEFAULT = NO_LAYER | NO_DEVICE | NO_COMPATIBLE_PROPERTIES | NO_COMPATIBLE_MODE
    ALL = DEFAULT | CANNOT_LOAD


#: the fallback case each kind of mapping miss is
FALLBACK_OF_MISS: dict[Miss, KernelizeFallback] = {
    Miss.NO_LAYER: KernelizeFallback.NO_LAYER,
    Miss.NO_DEVICE: KernelizeFallback.NO_DEVICE,
    Miss.NO_PROPERTIES: KernelizeFallback.NO_COMPATIBLE_PROPERTIES,
    Miss.NO_MODE: KernelizeFallback.NO_COMPATIBLE_MODE,
}


def fallback_flags(use_fallback: object) -> KernelizeFallback:
    """``use_fallback`` (a bool or a ``KernelizeFallback``) as flags; ``TypeError`` otherwise."""
    if isinstance(use_fallback, KernelizeFallback):
        return use_fallback
    if isinstance(use_fallback, bool):
        return KernelizeFallback.DEFAULT if use_fallback else KernelizeFallback.NONE
    raise TypeError(f"kernelize use_fallback must be a bool or a KernelizeFallback, "
                    f"got {use_fallback!r}")
