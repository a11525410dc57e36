"""check stage: compliance of a build tree (layout, metadata, digests, ELF policy, ops, import).

ELF facts are read with pyelftools; the policies (manylinux_2_28 symbol versions, the abi3
symbol list, allowed DT_NEEDED) are data files in ``check/policy/``; every finding code is
listed in ``check/codes.py``.
"""

from kernelkit.check.api import check_build, find_variant_dirs
from kernelkit.check.codes import CODES, Code
from kernelkit.check.report import Finding, Report

__all__ = ["CODES", "Code", "Finding", "Report", "check_build", "find_variant_dirs"]
