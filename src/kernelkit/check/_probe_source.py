# Run by `kernelkit check` in a fresh interpreter with `python -c`: stdlib and torch only
# (the interpreter under test need not have kernelkit). Prints one JSON line prefixed with
# KERNELKIT_PROBE= . Usage: python -c SOURCE env              -> facts about torch
#                           python -c SOURCE import DIR ID   -> import the variant at DIR
#                           python -c SOURCE tvm-ffi DIR ID  -> import a tvm-ffi variant at DIR
from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import json
import sys
from types import ModuleType


def _torch_facts() -> dict[str, object]:
    import torch

    return {"torch": torch.__version__.split("+")[0], "cuda": torch.version.cuda,
            "hip": getattr(torch.version, "hip", None),
            "xpu": getattr(torch.version, "xpu", None), "python": sys.version.split()[0],
            "tvm_ffi": _tvm_ffi_version()}


def _tvm_ffi_version() -> str | None:
    if importlib.util.find_spec("tvm_ffi") is None:
        return None
    import tvm_ffi

    return str(tvm_ffi.__version__)


def _op_facts(torch: ModuleType, ns: str) -> dict[str, dict[str, bool]]:
    from torch._library.simple_registry import singleton

    ops = {}
    for name in torch._C._dispatch_get_all_op_names():
        if not name.startswith(ns + "::"):
            continue
        has = torch._C._dispatch_has_kernel_for_dispatch_key
        fake = singleton.find(name).fake_impl.kernel is not None
        # composite kernels run on fake tensors too (explicit ones are registered for Meta)
        composite = (has(name, "CompositeImplicitAutograd")
                     or has(name, "CompositeExplicitAutograd"))
        ops[name] = {"meta": has(name, "Meta"), "fake": fake, "composite": composite}
    return ops


class _ArchiveInit(importlib.abc.Loader):
    """Runs ``__init__.py`` from the root of a zip-layout variant's ``<id>.zip``."""

    def __init__(self, archive: str) -> None:
        import zipimport

        self._zip = zipimport.zipimporter(archive)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        exec(self._zip.get_code("__init__"), module.__dict__)


def _spec(variant_dir: str, ns: str, name: str) -> importlib.machinery.ModuleSpec | None:
    if LAYOUT != "zip":
        return importlib.util.spec_from_file_location(
            name, variant_dir + "/__init__.py", submodule_search_locations=[variant_dir])
    archive = f"{variant_dir}/{ns}.zip"
    spec = importlib.machinery.ModuleSpec(name, _ArchiveInit(archive),
                                          origin=archive + "/__init__.py", is_package=True)
    spec.submodule_search_locations = [variant_dir, archive]
    return spec


def _load(variant_dir: str, ns: str, name: str) -> tuple[ModuleType, ModuleType | None]:
    spec = _spec(variant_dir, ns, name)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {variant_dir} as a Python package")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module, sys.modules.get(name + "._ops")


def _import_tvm_ffi(variant_dir: str, ns: str) -> dict[str, object]:
    module, ops_mod = _load(variant_dir, ns, ns + "_kernelkit_check")
    prefix = getattr(ops_mod, "torch_add_op_namespace_prefix", None)
    ops = getattr(ops_mod, "ops", None)
    return {"prefix": prefix("x") if callable(prefix) else None,
            "ops_type": type(ops).__module__ + "." + type(ops).__name__,
            "all": list(getattr(module, "__all__", []))}


def _import(variant_dir: str, ns: str) -> dict[str, object]:
    import torch

    module, ops_mod = _load(variant_dir, ns, ns + "_kernelkit_check")
    prefix = getattr(ops_mod, "add_op_namespace_prefix", None)
    ops = getattr(ops_mod, "ops", None)
    return {"prefix": prefix("x") if callable(prefix) else None,
            "ops_namespace": getattr(ops, "name", None),
            "all": list(getattr(module, "__all__", [])), "ops": _op_facts(torch, ns)}


LAYOUT = sys.argv[4] if len(sys.argv) > 4 else "files"

if __name__ == "__main__":
    if sys.argv[1] == "env":
        result: dict[str, object] = _torch_facts()
    elif sys.argv[1] == "tvm-ffi":
        result = _import_tvm_ffi(sys.argv[2], sys.argv[3])
    else:
        result = _import(sys.argv[2], sys.argv[3])
    print("KERNELKIT_PROBE=" + json.dumps(result))
