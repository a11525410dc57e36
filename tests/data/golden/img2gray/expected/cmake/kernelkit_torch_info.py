"""Describe the Python environment a kernel is built for, as JSON written to ``argv[1]``.

Standalone on purpose (standard library + torch only): ``kernelkit.builder.toolchain.probe``
runs it with the target interpreter and ``kernelkit create-pyproject`` copies it verbatim to
``cmake/kernelkit_torch_info.py`` where the generated CMake reads the same facts.

Importing torch takes seconds (a CUDA torch loads its CUDA libraries), so the facts are read
from the installed files instead: the version, CUDA and HIP from ``torch/version.py`` (plain
literal assignments, parsed, never executed), the C++ ABI from the mangled names in
``torch/lib/libc10.so`` (``std::__cxx11::`` appears only with the new ABI), the paths from
torch's location. When a file is missing or reads unexpectedly, torch is imported after all
(``KERNELKIT_PROBE_IMPORT=1`` always imports it).
"""

from __future__ import annotations

import ast
import glob
import importlib.util
import json
import os
import platform
import re
import site
import sys
import sysconfig


def _site_packages() -> list[str]:
    paths = list(site.getsitepackages()) if hasattr(site, "getsitepackages") else []
    paths.append(sysconfig.get_paths()["purelib"])
    paths.append(sysconfig.get_paths()["platlib"])
    out: list[str] = []
    for p in paths:
        if os.path.isdir(p) and os.path.realpath(p) not in [os.path.realpath(q) for q in out]:
            out.append(p)
    return out


def _tvm_ffi() -> dict[str, object]:
    """apache-tvm-ffi, when installed: its version and CMake package directory, read from the
    installed files (importing tvm_ffi imports torch); imported only when they do not say."""
    try:
        spec = importlib.util.find_spec("tvm_ffi")
    except (ImportError, ValueError):
        return {}
    if spec is None or not spec.origin:
        return {}
    cmake_dir = os.path.join(os.path.dirname(os.path.abspath(spec.origin)), "share", "cmake",
                             "tvm_ffi")
    try:
        from importlib.metadata import version

        found = version("apache-tvm-ffi")
    except Exception:
        found = None
    if found and os.path.isdir(cmake_dir):
        return {"tvm_ffi_version": found, "tvm_ffi_cmake_dir": cmake_dir}
    try:
        import tvm_ffi
        import tvm_ffi.libinfo
    except Exception:
        return {}
    return {"tvm_ffi_version": str(tvm_ffi.__version__),
            "tvm_ffi_cmake_dir": tvm_ffi.libinfo.find_cmake_path()}


def _cmake_target_definitions(torch_dir: str, target: str) -> list[str]:
    """``INTERFACE_COMPILE_DEFINITIONS`` of one imported target of torch's CMake package
    (``share/cmake/Caffe2/Caffe2Targets.cmake``): what ``find_package(Torch)`` gives consumers."""
    path = os.path.join(torch_dir, "share", "cmake", "Caffe2", "Caffe2Targets.cmake")
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError:
        return []
    block = re.search(r"set_target_properties\(" + target + r" PROPERTIES\n(.*?)\n\)", text, re.S)
    if block is None:
        return []
    found = re.search(r'INTERFACE_COMPILE_DEFINITIONS "([^"]*)"', block.group(1))
    if found is None:
        return []
    return [d for d in found.group(1).split(";") if d and "$<" not in d]


def _literals(path: str) -> dict[str, object]:
    """The ``name = <literal>`` assignments of a Python file, without running it."""
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read(), path)
    out: dict[str, object] = {}
    for node in tree.body:
        target = value = None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign):
            target, value = node.target, node.value
        if isinstance(target, ast.Name) and isinstance(value, ast.Constant):
            out[target.id] = value.value
    return out


def _torch_from_files() -> dict[str, object] | None:
    """torch's facts from its installed files (``None``: they cannot be read that way)."""
    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    torch_dir = os.path.dirname(os.path.abspath(spec.origin))
    try:
        version = _literals(os.path.join(torch_dir, "version.py"))
        libs = sorted(glob.glob(os.path.join(torch_dir, "lib", "libc10.so*")))
        if not libs or not isinstance(version.get("__version__"), str):
            return None
        with open(libs[0], "rb") as fh:
            cxx11_abi = b"St7__cxx11" in fh.read()
    except (OSError, SyntaxError, ValueError):
        return None
    return {"version": version["__version__"], "cuda": version.get("cuda"),
            "hip": version.get("hip"), "cxx11_abi": cxx11_abi, "torch_dir": torch_dir}


def _torch_by_import() -> dict[str, object]:
    try:
        import torch
    except Exception as exc:
        return {"error": f"cannot import torch: {type(exc).__name__}: {exc}"}
    return {"version": torch.__version__, "cuda": torch.version.cuda,
            "hip": getattr(torch.version, "hip", None),
            "cxx11_abi": bool(torch._C._GLIBCXX_USE_CXX11_ABI),
            "torch_dir": os.path.dirname(os.path.abspath(torch.__file__))}


def describe() -> dict[str, object]:
    sp = _site_packages()
    info: dict[str, object] = {
        "python_executable": sys.executable,
        "python_version": ".".join(str(v) for v in sys.version_info[:3]),
        "python_include": sysconfig.get_paths()["include"],
        "machine": platform.machine(),
        "os": sys.platform,
        "site_packages": sp,
    }
    info.update(_tvm_ffi())
    facts = None if os.environ.get("KERNELKIT_PROBE_IMPORT") == "1" else _torch_from_files()
    if facts is None:
        facts = _torch_by_import()
    if "error" in facts:
        info.update(facts)
        return info
    torch_dir = str(facts["torch_dir"])
    info.update(
        torch_version=facts["version"],
        cuda=facts["cuda"],
        hip=facts["hip"],
        cxx11_abi=facts["cxx11_abi"],
        cmake_prefix_path=os.path.join(torch_dir, "share", "cmake"),
        torch_dir=torch_dir,
        torch_include_dirs=[os.path.join(torch_dir, "include"),
                            os.path.join(torch_dir, "include", "torch", "csrc", "api", "include")],
        torch_lib_dir=os.path.join(torch_dir, "lib"),
        torch_definitions_cpu=_cmake_target_definitions(torch_dir, "torch_cpu"),
        torch_definitions_cuda=_cmake_target_definitions(torch_dir, "torch_cuda"),
        # CUDA library headers torch includes (cublas, cusparse, ...) ship in nvidia-* wheels.
        nvidia_include_dirs=sorted(
            d for p in sp for d in glob.glob(os.path.join(p, "nvidia", "*", "include"))
            if os.path.isdir(d)
        ),
    )
    return info


if __name__ == "__main__":
    data = json.dumps(describe(), indent=1)
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w", encoding="utf-8") as fh:
            fh.write(data)
    else:
        print(data)
