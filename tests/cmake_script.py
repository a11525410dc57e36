"""Run generated CMake with real ``cmake -P`` and record what each kernelkit function received.

A generated ``CMakeLists.txt`` is not a script (``project()`` is not scriptable, the ``kk_*``
functions compile things), so :func:`record_calls` runs it in script mode with ``project()``
and the ``kk_*`` functions of ``cmake/kernelkit.cmake`` replaced by recorders: each call is
written out with its exact arguments (``ARGV<i>``), and the test compares them with the
manifest's values. Anything a value could smuggle in (``execute_process``, ``file(WRITE)``)
would run for real in script mode, so a test also checks that no canary file appeared.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

#: The functions a generated [torch]/[tvm-ffi] CMakeLists.txt calls with manifest values.
RECORDED = ("kk_setup", "kk_add_sources", "kk_cpu_component", "kk_cuda_component",
            "kk_add_extension", "kk_dependency_cutlass", "kk_sources")
_SEP = "\x1e"  # never in a value: cmake_quote refuses control characters


def cmake_binary() -> Path:
    import cmake

    return Path(cmake.CMAKE_BIN_DIR) / "cmake"


def _recorder(name: str) -> str:
    return (f"function({name})\n"
            f'  file(APPEND "${{KK_RECORD}}" "{_SEP}{name}")\n'
            "  if(ARGC GREATER 0)\n"
            '    math(EXPR _last "${ARGC} - 1")\n'
            "    foreach(_i RANGE 0 ${_last})\n"
            f'      file(APPEND "${{KK_RECORD}}" "\\n${{ARGV${{_i}}}}")\n'
            "    endforeach()\n"
            "  endif()\n"
            "endfunction()\n")


def run_script(text: str, workdir: Path, *defines: str) -> subprocess.CompletedProcess[str]:
    """``cmake [-D...] -P`` of ``text`` in ``workdir``."""
    script = workdir / "script.cmake"
    script.write_text(text, encoding="utf-8")
    return subprocess.run([str(cmake_binary()), *(f"-D{d}" for d in defines), "-P", str(script)],
                          cwd=workdir, capture_output=True, text=True, timeout=60)


def record_calls(cmakelists: str, workdir: Path,
                 *defines: str) -> list[tuple[str, list[str]]]:
    """Run ``cmakelists`` with recorders; ``[(function, [arguments])]`` in call order."""
    (workdir / "cmake").mkdir(parents=True, exist_ok=True)
    stubs = "macro(project)\nendmacro()\n" + "".join(_recorder(n) for n in RECORDED)
    (workdir / "cmake" / "kernelkit.cmake").write_text(stubs, encoding="utf-8")
    record = workdir / "calls.txt"
    record.write_text("", encoding="utf-8")
    driver = (f"set(KK_RECORD {_quote(str(record))})\n"
              f"set(CMAKE_CURRENT_SOURCE_DIR {_quote(str(workdir))})\n"
              f"{stubs}include({_quote(str(workdir / 'CMakeLists.txt'))})\n")
    (workdir / "CMakeLists.txt").write_text(cmakelists, encoding="utf-8")
    proc = run_script(driver, workdir, *defines)
    assert proc.returncode == 0, proc.stderr
    calls = []
    for chunk in record.read_text(encoding="utf-8").split(_SEP)[1:]:
        name, *args = chunk.split("\n")
        calls.append((name, args))
    return calls


def _quote(path: str) -> str:
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$") + '"'
