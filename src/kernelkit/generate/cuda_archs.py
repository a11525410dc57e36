"""CUDA capabilities: toolkit defaults and the per-component "loose intersection" (spec §2.5).

Standalone on purpose (standard library only): kernelkit imports it to plan builds and
``kernelkit create-pyproject`` copies it verbatim to ``cmake/kernelkit_cuda_archs.py`` so the
generated ``setup.py`` (dev loop) computes exactly the same capabilities without kernelkit.

Capabilities are strings such as ``"9.0"``, ``"9.0a"``, ``"10.0f"`` or ``"12.1+PTX"`` (also
embed PTX for that capability).
"""

from __future__ import annotations

import re

# (minimum toolkit (major, minor), default capability list); first match wins.
DEFAULT_CAPABILITIES: tuple[tuple[tuple[int, int], tuple[str, ...]], ...] = (
    ((13, 0), ("7.5", "8.0", "8.6", "8.7", "8.9", "9.0", "10.0", "11.0", "12.0", "12.1+PTX")),
    ((12, 8), ("7.0", "7.2", "7.5", "8.0", "8.6", "8.7", "8.9", "9.0", "10.0", "10.1",
               "12.0+PTX")),
    ((0, 0), ("7.0", "7.2", "7.5", "8.0", "8.6", "8.7", "8.9", "9.0+PTX")),
)

_CAP_RE = re.compile(r"^(\d+)\.(\d+)([af]?)(\+PTX)?$")


def toolkit_version(text: str) -> tuple[int, int]:
    """``"13.0"`` / ``"12.8.1"`` -> ``(13, 0)`` / ``(12, 8)``."""
    parts = text.split("+")[0].split(".")
    return int(parts[0]), int(parts[1]) if len(parts) > 1 else 0


def default_capabilities(toolkit: str) -> list[str]:
    """The capabilities compiled by default with CUDA toolkit ``toolkit`` (e.g. ``"13.0"``)."""
    version = toolkit_version(toolkit)
    for minimum, caps in DEFAULT_CAPABILITIES:
        if version >= minimum:
            return list(caps)
    raise AssertionError("unreachable: the last entry matches every version")


def parse_capabilities(text: str) -> list[str]:
    """``"8.0, 9.0+PTX"`` or ``"8.0;9.0"`` -> ``["8.0", "9.0+PTX"]``; raises ValueError."""
    caps = [c.strip() for c in re.split(r"[;,\s]+", text) if c.strip()]
    bad = [c for c in caps if not _CAP_RE.match(c)]
    if bad or not caps:
        raise ValueError(f"invalid CUDA capabilities {text!r}: expected e.g. \"9.0\" or "
                         "\"8.0,9.0+PTX\" (major.minor, optional a/f suffix, optional +PTX)")
    return caps


def _key(cap: str) -> tuple[int, int, str]:
    m = _CAP_RE.match(cap)
    if not m:
        raise ValueError(f"invalid CUDA capability {cap!r}")
    return int(m.group(1)), int(m.group(2)), m.group(3)


def _strip_ptx(cap: str) -> str:
    return cap[: -len("+PTX")] if cap.endswith("+PTX") else cap


def loose_intersection(sources: list[str], targets: list[str]) -> list[str]:
    """Intersect a component's ``cuda-capabilities`` (``sources``) with the toolchain's
    ``targets`` the way upstream's CMake does (spec §2.5):

    * ``+PTX`` on a source is remembered and re-applied; PTX sources may match across majors;
    * ``9.0a``/``10.0f`` sources are kept iff their base is a target (which is then dropped);
    * for each remaining target T, the highest source S <= T with T's major (or S a PTX
      source) is taken; the result is de-duplicated and naturally sorted.
    """
    target_set = [_strip_ptx(t) for t in targets]
    ptx = {_strip_ptx(s) for s in sources if s.endswith("+PTX")}
    plain = sorted({_strip_ptx(s) for s in sources}, key=_key)
    result: list[str] = []
    for src in [s for s in plain if _key(s)[2]]:
        base = src[:-1]
        if base in target_set:
            target_set.remove(base)
            result.append(src)
    plain = [s for s in plain if not _key(s)[2]]
    for tgt in target_set:
        tmaj, tmin, _ = _key(tgt)
        best = None
        for src in plain:
            smaj, smin, _ = _key(src)
            if (smaj, smin) > (tmaj, tmin):
                break
            if src in ptx or smaj == tmaj:
                best = src
        if best is not None and best not in result:
            result.append(best)
    final = [f"{c}+PTX" if c in ptx else c for c in result]
    return sorted(final, key=lambda c: _key(_strip_ptx(c)))


def component_capabilities(declared: list[str] | None, targets: list[str]) -> list[str]:
    """Capabilities for one component: ``targets`` as given when it declares none."""
    if not declared:
        return list(targets)
    return loose_intersection(declared, targets)


def gencode_flags(caps: list[str]) -> list[str]:
    """nvcc flags, one token per capability (``9.0+PTX`` also embeds ``compute_90``)."""
    flags = []
    for cap in caps:
        major, minor, suffix = _key(_strip_ptx(cap))
        arch = f"{major}{minor}{suffix}"
        code = f"[sm_{arch},compute_{arch}]" if cap.endswith("+PTX") else f"sm_{arch}"
        flags.append(f"-gencode=arch=compute_{arch},code={code}")
    return flags


def metadata_archs(per_component: list[list[str]]) -> list[str]:
    """``backend.archs`` of metadata.json: plain string sort of the union (as upstream)."""
    return sorted({c for caps in per_component for c in caps})
