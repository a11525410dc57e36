# Run by `kernelkit check` in a fresh interpreter with `python -c`: stdlib and torch only
# (the interpreter under test need not have kernelkit). Prints one JSON line prefixed with
# KERNELKIT_PROBE= . Usage: python -c SOURCE env              -> facts about torch
#                           python -c SOURCE import DIR ID BACKEND -> import the variant at DIR
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


# The dispatch key a variant's backend implements its ops for (upstream's backends).
_BACKEND_KEYS = {"cpu": "CPU", "cuda": "CUDA", "rocm": "CUDA", "xpu": "XPU", "metal": "MPS"}


def _op_facts(torch: ModuleType, ns: str, backend: str) -> dict[str, dict[str, bool]]:
    from torch._library.simple_registry import singleton

    key = _BACKEND_KEYS.get(backend)
    has = torch._C._dispatch_has_kernel_for_dispatch_key
    ops = {}
    for name in torch._C._dispatch_get_all_op_names():
        if not name.startswith(ns + "::"):
            continue
        fake = singleton.find(name).fake_impl.kernel is not None
        # composite kernels run on fake tensors too (explicit ones are registered for Meta)
        composite = (has(name, "CompositeImplicitAutograd")
                     or has(name, "CompositeExplicitAutograd"))
        ops[name] = {"meta": has(name, "Meta"), "fake": fake, "composite": composite,
                     "backend": key is None or has(name, key)}
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


def _registered_at(torch: ModuleType, name: str) -> str:
    """Where ``name`` was defined (``registered at FILE:LINE`` of the dispatcher's dump)."""
    for line in torch._C._dispatch_dump(name).splitlines():
        if line.startswith("debug: registered at "):
            return str(line[len("debug: registered at "):]).strip()
    return ""


def _all_ops(torch: ModuleType) -> set[str]:
    return set(torch._C._dispatch_get_all_op_names())


def _load_extension(variant_dir: str, ns: str) -> str | None:
    """Load the variant's compiled module on its own, so that what it registers is known even
    when the package does not import; the error text if it fails, else ``None``."""
    import glob
    import importlib.machinery
    import os

    for path in sorted(glob.glob(os.path.join(glob.escape(variant_dir), ns + ".*so"))):
        loader = importlib.machinery.ExtensionFileLoader(ns, path)
        spec = importlib.util.spec_from_file_location(ns, path, loader=loader)
        try:
            assert spec is not None
            loader.exec_module(importlib.util.module_from_spec(spec))
        except BaseException as exc:  # reported, not raised
            return f"{type(exc).__name__}: {exc}"
    return None


def _load(variant_dir: str, ns: str, name: str) -> tuple[ModuleType, ModuleType | None]:
    spec = _spec(variant_dir, ns, name)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {variant_dir} as a Python package")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    # _ops itself: a package whose __init__ does not import it (noarch kernels often do not)
    # is fine, and its _ops must still give the build's namespace.
    return module, importlib.import_module(name + "._ops")


def _import_tvm_ffi(variant_dir: str, ns: str) -> dict[str, object]:
    module, ops_mod = _load(variant_dir, ns, ns + "_kernelkit_check")
    prefix = getattr(ops_mod, "torch_add_op_namespace_prefix", None)
    ops = getattr(ops_mod, "ops", None)
    return {"prefix": prefix("x") if callable(prefix) else None,
            "ops_type": type(ops).__module__ + "." + type(ops).__name__,
            "all": list(getattr(module, "__all__", []))}


def _import(variant_dir: str, ns: str, backend: str) -> dict[str, object]:
    """Import the variant: its compiled module alone first, then the package and its _ops.
    Reports the ops it registered outside ``ns`` (compiled ones, and Python ones defined in the
    variant's files) with where they were defined, and facts about the ops in ``ns``; an import
    error is reported (``import_error``), not raised."""
    import os
    import traceback

    import torch

    before = _all_ops(torch)
    out: dict[str, object] = {"extension_error": _load_extension(variant_dir, ns)}
    compiled = _all_ops(torch) - before
    module = ops_mod = None
    try:
        module, ops_mod = _load(variant_dir, ns, ns + "_kernelkit_check")
    except BaseException:  # reported, not raised
        out["import_error"] = traceback.format_exc()[-4000:]
    prefix = getattr(ops_mod, "add_op_namespace_prefix", None)
    given = getattr(getattr(ops_mod, "ops", None), "name", None)
    # a noarch _ops.py follows the importing torch's backend: its namespace is the variant's too
    own = tuple(dict.fromkeys(n for n in (ns, given) if isinstance(n, str)))
    here = os.path.realpath(variant_dir) + os.sep
    python = {n for n in _all_ops(torch) - before - compiled
              if os.path.realpath(_registered_at(torch, n).rsplit(":", 1)[0]).startswith(here)}
    out["foreign"] = {n: _registered_at(torch, n) for n in sorted(compiled | python)
                      if not n.startswith(tuple(o + "::" for o in own))}
    facts: dict[str, dict[str, bool]] = {}
    for o in own:
        facts.update(_op_facts(torch, o, backend))
    out.update({"prefix": prefix("x") if callable(prefix) else None, "ops_namespace": given,
                "all": list(getattr(module, "__all__", [])), "ops": facts})
    return out


LAYOUT = sys.argv[5] if len(sys.argv) > 5 else "files"

if __name__ == "__main__":
    if sys.argv[1] == "env":
        result: dict[str, object] = _torch_facts()
    elif sys.argv[1] == "tvm-ffi":
        result = _import_tvm_ffi(sys.argv[2], sys.argv[3])
    else:
        result = _import(sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else "")
    print("KERNELKIT_PROBE=" + json.dumps(result))
