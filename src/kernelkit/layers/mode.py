"""``Mode``: what a model is kernelized for (upstream-loader.md §1.3).

A mapping registers repositories per mode; ``kernelize`` is asked for one mode and picks the
best registered repository for it (see ``mapping.select_repository``).
"""

from __future__ import annotations

from enum import Flag, auto


class Mode(Flag):
    """Kernelize mode.

    * ``INFERENCE`` / ``TRAINING``: what the model is used for; mutually exclusive.
    * ``TORCH_COMPILE``: combined with one of the above when the model runs under
      ``torch.compile``; only layers with ``can_torch_compile = True`` are used then.
    * ``FALLBACK``: in a mapping only, the repository used when no other mode matches;
      it cannot be combined with other modes.
    """

    _NONE = 0
    FALLBACK = auto()
    TRAINING = auto()
    INFERENCE = auto()
    TORCH_COMPILE = auto()

    def __or__(self, other: object) -> Mode:
        union = super().__or__(other)  # type: ignore[operator]
        if not isinstance(union, Mode):
            return NotImplemented
        if Mode.INFERENCE in union and Mode.TRAINING in union:
            raise ValueError("Mode.INFERENCE and Mode.TRAINING are mutually exclusive.")
        if Mode.FALLBACK in union and union != Mode.FALLBACK:
            raise ValueError("Mode.FALLBACK cannot be combined with other modes.")
        return union

    def describe(self) -> str:
        """``"INFERENCE|TORCH_COMPILE"``: the flag names, stable across Python versions."""
        names = [m.name for m in (Mode.FALLBACK, Mode.TRAINING, Mode.INFERENCE,
                                  Mode.TORCH_COMPILE) if m in self and m.name]
        return "|".join(names) or "NONE"


# For each mode kernelize can be asked for: the registered modes to try, best first.
# A kernel registered for training also serves inference (it has a forward); a kernel
# registered for torch.compile also serves eager use; FALLBACK is always last.
MODE_PRIORITY: dict[Mode, tuple[Mode, ...]] = {
    Mode.INFERENCE: (
        Mode.INFERENCE,
        Mode.INFERENCE | Mode.TORCH_COMPILE,
        Mode.TRAINING,
        Mode.TRAINING | Mode.TORCH_COMPILE,
        Mode.FALLBACK,
    ),
    Mode.TRAINING: (Mode.TRAINING, Mode.TRAINING | Mode.TORCH_COMPILE, Mode.FALLBACK),
    Mode.INFERENCE | Mode.TORCH_COMPILE: (
        Mode.INFERENCE | Mode.TORCH_COMPILE,
        Mode.TRAINING | Mode.TORCH_COMPILE,
        Mode.FALLBACK,
    ),
    Mode.TRAINING | Mode.TORCH_COMPILE: (Mode.TRAINING | Mode.TORCH_COMPILE, Mode.FALLBACK),
}


def validate_kernelize_mode(mode: Mode) -> None:
    """Raise ``ValueError`` unless ``mode`` is one ``kernelize`` can be asked for."""
    if not isinstance(mode, Mode):
        raise TypeError(f"kernelize mode must be a kernelkit.layers.Mode, got {mode!r}")
    if mode.value == Mode.FALLBACK.value:  # compare values: `==` narrows Flag types in mypy
        raise ValueError("Mode.FALLBACK can only be used to register kernel mappings.")
    if Mode.INFERENCE not in mode and Mode.TRAINING not in mode:
        raise ValueError("kernelize mode must contain Mode.INFERENCE or Mode.TRAINING.")
