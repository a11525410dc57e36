"""A failed build's errors point at the author's file and line first
(builder/compile/diagnostics.py)."""

from __future__ import annotations

from pathlib import Path

from kernelkit.builder.compile.diagnostics import first_errors

PROJECT = Path("/p/scale-add")
BUILD = PROJECT / "_cmake_build" / "v" / "cmake-build"
GENERATED = PROJECT / "_cmake_build" / "v" / "src"

GCC_LOG = """\
[1/3] ccache c++ -DCPU_KERNEL ... -c ../../../torch-ext/torch_binding.cpp
FAILED: [code=1] CMakeFiles/x.dir/scale_add_cpu/scale_add_cpu.cpp.o
/usr/bin/c++ -DCPU_KERNEL -O3 ... -c ../../../scale_add_cpu/scale_add_cpu.cpp
In file included from /usr/include/torch/all.h:3,
/usr/include/torch/Tensor.h:10:2: error: #error broken header
   10 | #error broken header
      |  ^~~~~
../../../scale_add_cpu/scale_add_cpu.cpp:35:3: error: 'undeclared' was not declared in this scope
   35 |   undeclared(1);
      |   ^~~~~~~~~~
ninja: build stopped: subcommand failed.
"""


def test_the_projects_own_error_comes_first_relative_to_the_project() -> None:
    lines = first_errors(GCC_LOG, PROJECT, generated=GENERATED, cwd=BUILD)
    assert lines[0] == ("scale_add_cpu/scale_add_cpu.cpp:35:3: error: 'undeclared' was not "
                        "declared in this scope")
    assert lines[1:3] == ["   35 |   undeclared(1);", "      |   ^~~~~~~~~~"]
    assert lines[3].startswith("/usr/include/torch/Tensor.h:10:2: error: #error")
    assert not any("c++ -DCPU_KERNEL" in line for line in lines)  # no compile command lines


def test_nvcc_diagnostics_and_generated_files() -> None:
    log = ("FAILED: x.cu.o\n"
           f"{GENERATED}/cmake/kernelkit_compat.cpp(3): error: generated trouble\n"
           "/p/scale-add/k/k.cu(12): error: identifier \"blockIdx_\" is undefined\n")
    lines = first_errors(log, PROJECT, generated=GENERATED, cwd=BUILD)
    assert lines[0] == 'k/k.cu:12: error: identifier "blockIdx_" is undefined'
    assert "kernelkit_compat.cpp" in lines[1]  # not the project's own file: after it


def test_a_failed_configure_shows_cmake_and_kernelkit_messages() -> None:
    log = ("-- kernelkit: _x_cpu\nCMake Error at cmake/kernelkit.cmake:88 (message):\n"
           "  kernelkit: torch 2.13 < [torch] minver 2.99\n\n-- Configuring incomplete\n")
    lines = first_errors(log, PROJECT)
    assert lines[0].startswith("CMake Error at cmake/kernelkit.cmake:88")
    assert "kernelkit: torch 2.13 < [torch] minver 2.99" in "\n".join(lines)
    assert first_errors("nothing useful\n", PROJECT) == []


def test_many_errors_are_cut_with_a_count() -> None:
    log = "FAILED: x\n" + "".join(f"/p/scale-add/a.cpp:{i}:1: error: e{i}\n" for i in range(9))
    lines = first_errors(log, PROJECT, limit=3)
    assert lines[-1] == "... and 6 more error(s) in the log" and len(lines) == 4
