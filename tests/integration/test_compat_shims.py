"""The manylinux_2_28 compatibility shims compiled into every extension.

Also found there (glibc 2.39, libstdc++ linked statically): references to
``__isoc23_strtoul@GLIBC_2.38``, ``arc4random@GLIBC_2.36``, ``fstat64@GLIBC_2.33`` and
(activation example) ``exp@GLIBC_2.29``; the C
shim now forwards those to baseline functions. This machine's glibc (2.36) exports
``arc4random`` and ``fstat64`` at those versions, so the tests below exercise them for real;
the C23 names are declared by hand, as glibc >= 2.38 headers would redirect to them.

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


def _c_shim(tmp_path: Path) -> Path:
    """The C shim compiled as C (as CMake does), not as C++."""
    obj = tmp_path / "kernelkit_compat_c.o"
    subprocess.run(["gcc", "-O2", "-fPIC", "-c", str(SHIMS / "kernelkit_compat.c"), "-o", str(obj)],
                   check=True)
    return obj


def _link(tmp_path: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "use.cpp").write_text(USER_CODE)
    out = tmp_path / "lib.so"
    return subprocess.run(
        ["g++", "-O2", "-fPIC", "-shared", *flags, "-o", str(out), str(tmp_path / "use.cpp"),
         str(SHIMS / "kernelkit_compat.cpp"), str(_c_shim(tmp_path))],
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


NEWER_GLIBC_USER = r"""
#include <sys/stat.h>
#include <cmath>
#include <cstdlib>
extern "C" unsigned long __isoc23_strtoul(const char*, char**, int);
extern "C" int __isoc23_sscanf(const char*, const char*, ...);
extern "C" int probe(const char* path) {
  struct stat64 st;
  if (stat64(path, &st) != 0 || fstat64(0, &st) != 0 || st.st_size < 0) return -1;
  int y = 0;
  __isoc23_sscanf("7", "%d", &y);
  unsigned r = arc4random_uniform(5) + (arc4random() & 0u);
  volatile double one = 1.0;
  if (std::exp(one) < 2.7 || std::log(one) != 0.0 || std::pow(one + one, 3.0) != 8.0) return -2;
  return static_cast<int>(__isoc23_strtoul("12", nullptr, 10)) + y + (r < 5 ? 100 : -1000);
}
"""


def test_newer_glibc_symbols_are_forwarded_to_baseline_versions(tmp_path: Path) -> None:
    import ctypes

    (tmp_path / "use.cpp").write_text(NEWER_GLIBC_USER)
    (tmp_path / "exports.map").write_text("{ global: probe; local: *; };\n")
    lib = tmp_path / "newer.so"
    proc = subprocess.run(
        ["g++", "-O2", "-fPIC", "-shared", f"-Wl,--version-script={tmp_path / 'exports.map'}",
         "-o", str(lib), str(tmp_path / "use.cpp"), str(_c_shim(tmp_path)),
         str(SHIMS / "kernelkit_compat.cpp")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert max(_versions(lib, "GLIBC")) <= (2, 28)
    dump = subprocess.run(["objdump", "-T", str(lib)], capture_output=True, text=True).stdout
    assert "arc4random" not in dump and "__isoc23" not in dump and "fstat64" not in dump
    math = re.findall(r"\((GLIBC_[\d.]+)\)\s+(exp|log|pow)$", dump, re.M)
    assert math and all(v == "GLIBC_2.2.5" for v, _ in math)  # the baseline libm versions
    assert ctypes.CDLL(str(lib)).probe(b"/") == 12 + 7 + 100
