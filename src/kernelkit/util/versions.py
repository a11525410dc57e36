"""The one place that reads "major.minor" out of a version string.

Torch, CUDA, ROCm and Python versions all reach kernelkit as text (``"2.13.0+cpu"``,
``"13.0"``, ``"7.0.51831-a3e329ad8"``, ``"3.11"``); every comparison by release series goes
through :func:`major_minor`.
"""

from __future__ import annotations


def _leading_int(text: str) -> int:
    digits = ""
    for ch in text:
        if not ch.isdigit():
            break
        digits += ch
    return int(digits or "0")


def major_minor(version: str) -> tuple[int, int]:
    """``"2.13.0+cpu"`` -> ``(2, 13)``; ``"13.0"`` -> ``(13, 0)``; ``"2"`` -> ``(2, 0)``;
    ``"7.0.51831-a3e329ad8"`` -> ``(7, 0)``."""
    parts = version.strip().split("+")[0].split(".")
    return _leading_int(parts[0]), _leading_int(parts[1]) if len(parts) > 1 else 0


def major_minor_text(version: str) -> str:
    """``"13.0.88"`` -> ``"13.0"``."""
    major, minor = major_minor(version)
    return f"{major}.{minor}"
