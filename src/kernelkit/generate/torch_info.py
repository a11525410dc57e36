"""Describe the Python environment a kernel is built for, as JSON written to ``argv[1]``.

Standalone on purpose (standard library + torch only): ``kernelkit.builder.probe`` runs it with
the target interpreter and ``kernelkit create-pyproject`` copies it verbatim to
``cmake/kernelkit_torch_info.py`` where the generated CMake reads the same facts.
"""

from __future__ import annotations

import glob
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
    """apache-tvm-ffi, when installed: its version and CMake package directory."""
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
    try:
        import torch
        import torch.utils
    except Exception as exc:
        info["error"] = f"cannot import torch: {type(exc).__name__}: {exc}"
        return info
    torch_dir = os.path.dirname(os.path.abspath(torch.__file__))
    info.update(
        torch_version=torch.__version__,
        cuda=torch.version.cuda,
        hip=getattr(torch.version, "hip", None),
        cxx11_abi=bool(torch._C._GLIBCXX_USE_CXX11_ABI),
        cmake_prefix_path=torch.utils.cmake_prefix_path,
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
