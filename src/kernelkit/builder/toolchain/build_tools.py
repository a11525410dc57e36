"""The programs a compile needs besides the CUDA toolkit (``toolkit.py``): CMake and ninja
(kernelkit's PyPI ``cmake``/``ninja``), a C and a C++ compiler. Found once, before CMake runs,
so that a missing or broken one is reported in words ("install X or set Y") by the plan,
``list-variants`` and ``build``, instead of as CMake's raw error.

A compiler is taken as CMake takes it: ``$CC``/``$CXX`` when set, else the first of ``cc``,
``gcc``, ``clang`` (``c++``, ``g++``, ``clang++``) on ``PATH``; it is usable when
``<compiler> --version`` succeeds (once per path and modification time).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from kernelkit.errors import NotBuildableError
from kernelkit.settings import CC, CXX, PATH, Text

_COMPILERS: dict[str, tuple[Text, tuple[str, ...], str]] = {
    # language: (variable, names on PATH, what to install)
    "C": (CC, ("cc", "gcc", "clang"), "a C compiler (e.g. apt install gcc)"),
    "C++": (CXX, ("c++", "g++", "clang++"), "a C++ compiler (e.g. apt install g++)"),
}


@dataclass(frozen=True)
class BuildTools:
    """CMake, ninja and the compilers a build uses."""

    cmake: Path
    ninja: Path
    cc: Path
    cxx: Path


def _which(name: str, environ: Mapping[str, str]) -> Path | None:
    found = shutil.which(name, path=PATH.raw(environ) or os.defpath)
    return Path(found) if found else None


@lru_cache(maxsize=32)
def _runs(path: Path, mtime: float) -> str | None:
    """Why ``path --version`` does not work (``None``: it does)."""
    try:
        proc = subprocess.run([str(path), "--version"], capture_output=True, text=True,
                              timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        return f"`{path} --version` exits {proc.returncode}: {tail[0]}"
    return None


def _usable(path: Path) -> str | None:
    try:
        return _runs(path, path.stat().st_mtime)
    except OSError as exc:
        return str(exc)


def find_compiler(language: str, environ: Mapping[str, str]) -> Path:
    """The compiler CMake will use for ``language`` ("C" or "C++"); raises a machine
    :class:`NotBuildableError` saying what to install or set."""
    setting, names, install = _COMPILERS[language]
    var, given = setting.name, (setting.read(environ) or "").split()
    if given:
        path = Path(given[0]) if os.sep in given[0] else _which(given[0], environ)
        if path is None or not (path.is_file() and os.access(path, os.X_OK)):
            raise NotBuildableError(f"the {language} compiler", f"{var}={environ[var]} is not "
                                    "an executable", hint=f"set {var} to {install.split(' (')[0]}"
                                    f" or unset it")
        problem = _usable(path)
        if problem:
            raise NotBuildableError(f"the {language} compiler", f"{var}={path} does not run "
                                    f"({problem})", hint=f"reinstall it or set {var} to another")
        return path
    for name in names:
        path = _which(name, environ)
        if path is not None and _usable(path) is None:
            return path
    raise NotBuildableError(f"the {language} compiler", f"no usable {language} compiler: none "
                            f"of {', '.join(names)} runs from PATH and {var} is not set",
                            hint=f"install {install} or set {var}=/path/to/compiler")


def _wheel_program(package: str) -> Path:
    """``<package>/data/bin/<package>`` of the PyPI ``cmake``/``ninja`` wheels, found without
    importing them (``import cmake`` reads its whole RECORD: 0.1 s of every build)."""
    spec = importlib.util.find_spec(package)
    if spec is None:
        raise NotBuildableError("kernelkit's build tools", f"{package} is not installed",
                                hint="pip install 'kernelkit[build]' (cmake and ninja from "
                                     "PyPI)")
    for location in spec.submodule_search_locations or ():
        program = Path(location) / "data" / "bin" / package
        if program.is_file():
            return program
    module = importlib.import_module(package)  # another layout: ask the package
    return Path(module.CMAKE_BIN_DIR if package == "cmake" else module.BIN_DIR) / package


def find_cmake_ninja() -> tuple[Path, Path]:
    """kernelkit's own ``cmake`` and ``ninja`` (the ``build`` extra)."""
    tools = (_wheel_program("cmake"), _wheel_program("ninja"))
    for tool in tools:
        if not (tool.is_file() and os.access(tool, os.X_OK)):
            raise NotBuildableError("kernelkit's build tools", f"{tool} is missing",
                                    hint="pip install --force-reinstall cmake ninja")
    return tools


def find_build_tools(environ: Mapping[str, str]) -> BuildTools:
    """CMake, ninja and the C/C++ compilers for a build in ``environ``; raises a machine
    :class:`NotBuildableError` ("install X or set Y") for the first that is missing."""
    cmake, ninja = find_cmake_ninja()
    return BuildTools(cmake, ninja, find_compiler("C", environ), find_compiler("C++", environ))


def build_tools_problem(environ: Mapping[str, str]) -> str | None:
    """What a compiled variant lacks here (every missing tool), in words with what to do
    (``None``: nothing)."""
    problems = []
    for find in (find_cmake_ninja, lambda: find_compiler("C", environ),
                 lambda: find_compiler("C++", environ)):
        try:
            find()
        except NotBuildableError as exc:
            problems.append(f"{exc.reason}; {exc.hint}" if exc.hint else exc.reason)
    return "; ".join(problems) or None
