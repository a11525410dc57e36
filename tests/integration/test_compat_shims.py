"""The manylinux_2_28 compatibility shims compiled into every extension.

Found on the GPU machine (GCC 13 under /opt/gcc, which links libstdc++ statically there): a
strong definition of ``std::__throw_bad_array_new_length`` clashed with libstdc++.a's
("multiple definition"). The shims are weak now; these tests link them both ways with this
machine's g++.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

import kernelkit.generate as generate

SHIMS = Path(generate.__file__).parent / "templates"
USER_CODE = """
#include <stdexcept>
#include <string>
#include <vector>
extern "C" int use(int n) {
  std::vector<std::string> v;
  v.reserve(n);
  v.emplace_back("x");
  if (n < 0) throw std::length_error("negative");
  return static_cast<int>(v.size());
}
"""

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")


def _link(tmp_path: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "use.cpp").write_text(USER_CODE)
    out = tmp_path / "lib.so"
    return subprocess.run(
        ["g++", "-O2", "-fPIC", "-shared", *flags, "-o", str(out), str(tmp_path / "use.cpp"),
         str(SHIMS / "kernelkit_compat.cpp"), str(SHIMS / "kernelkit_compat.c")],
        capture_output=True, text=True)


def _versions(lib: Path, prefix: str) -> list[tuple[int, ...]]:
    dump = subprocess.run(["objdump", "-T", str(lib)], capture_output=True, text=True).stdout
    return [tuple(int(x) for x in v.split(".")) for v in re.findall(rf"{prefix}_([\d.]+)", dump)]


def test_shims_link_with_a_static_libstdcxx(tmp_path: Path) -> None:
    proc = _link(tmp_path, "-static-libstdc++")
    assert proc.returncode == 0, proc.stderr
    assert "multiple definition" not in proc.stderr


def test_shims_keep_dynamic_link_within_manylinux_2_28(tmp_path: Path) -> None:
    proc = _link(tmp_path)
    assert proc.returncode == 0, proc.stderr
    lib = tmp_path / "lib.so"
    assert max(_versions(lib, "GLIBCXX"), default=(3, 4)) <= (3, 4, 24)
    assert max(_versions(lib, "GLIBC"), default=(2, 2, 5)) <= (2, 28)
