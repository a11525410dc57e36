"""The `kernelkit.get_kernel(...)` lines that README.md and docs/ show in code load what they
name: a publisher that the loader does not trust by default gets ``trust_remote_code=True``
(or ``KERNELKIT_TRUSTED_PUBLISHERS`` on the same line), as the cards do (issue 27: a copied
usage line raised ``TrustError``). Cards and ``upload``'s hints are run for real in
tests/integration/test_cli_publishing.py; this holds the hand-written docs."""

from __future__ import annotations

import re
from pathlib import Path

from kernelkit.util.publishers import DEFAULT_TRUSTED_PUBLISHERS

ROOT = Path(__file__).resolve().parents[2]
CALL = re.compile(r"""kernelkit\.get_kernel\(\s*["']([\w.-]+)/[\w.-]+["']([^)]*)\)""")


def code_lines(text: str) -> list[tuple[int, str]]:
    """Lines inside fenced blocks and indented (4 spaces) blocks, with their numbers."""
    out, fenced = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif fenced or line.startswith("    "):
            out.append((number, line))
    return out


def untrusted_calls(text: str) -> list[str]:
    found = []
    for number, line in code_lines(text):
        for m in CALL.finditer(line):
            org, rest = m.group(1), m.group(2)
            if (org not in DEFAULT_TRUSTED_PUBLISHERS and "trust_remote_code=True" not in rest
                    and "KERNELKIT_TRUSTED_PUBLISHERS" not in line):
                found.append(f"{number}: {line.strip()}")
    return found


def test_documented_usage_lines_carry_trust() -> None:
    bad = {str(p.relative_to(ROOT)): calls
           for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
           if (calls := untrusted_calls(p.read_text()))}
    assert bad == {}, "these raise TrustError when copied: add trust_remote_code=True"


def test_the_scanner_sees_a_line_without_trust() -> None:
    text = ("```python\nk = kernelkit.get_kernel('acme/x', version=1)\n"
            "k = kernelkit.get_kernel('acme/x', version=1, trust_remote_code=True)\n"
            "k = kernelkit.get_kernel('kernels-community/x', version=1)\n```\n"
            "    KERNELKIT_TRUSTED_PUBLISHERS=acme python -c \"kernelkit.get_kernel('acme/x')\"\n"
            "prose: kernelkit.get_kernel('acme/x')\n")
    assert untrusted_calls(text) == ["2: k = kernelkit.get_kernel('acme/x', version=1)"]
