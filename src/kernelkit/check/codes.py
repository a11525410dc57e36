"""Every finding ``kernelkit check`` can report, as data: code -> severity, what, how to fix.

Findings carry a specific message (which file, which symbol); the ``fix`` here is the default
advice, which a rule may replace with a more precise one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Code:
    code: str
    severity: Severity
    title: str
    fix: str


_CODES: tuple[Code, ...] = (
    # --- layout -----------------------------------------------------------------------------
    Code("no-variants", "error", "no build variants found",
         "point kernelkit check at a project, its build/ directory or a build variant; "
         "build first with `kernelkit build`"),
    Code("variant-name", "error", "directory name is not a variant name",
         "variant directories are named like torch213-cxx11-cpu-x86_64-linux or torch-cpu; "
         "rename or remove the directory"),
    Code("missing-init", "error", "__init__.py missing",
         "the variant must contain the package's __init__.py (from torch-ext/<name>/); rebuild"),
    Code("missing-ops", "error", "_ops.py missing",
         "the variant must contain the generated _ops.py; rebuild with `kernelkit build`"),
    Code("missing-extension", "error", "compiled extension missing",
         "an arch variant must contain <metadata id>.abi3.so; rebuild with `kernelkit build`"),
    Code("extra-extension", "error", "unexpected shared library",
         "a variant ships exactly one compiled extension, named <metadata id>.abi3.so; remove "
         "other .so files or link them statically"),
    Code("stray-file", "error", "build leftover inside the variant",
         "remove build-tree files (_cmake_build, CMakeFiles, *.o, *.egg-info) from the variant "
         "and rebuild so the digest matches"),
    Code("missing-symbols", "warning", "symbols.json missing",
         "rebuild with `kernelkit build` (every build writes symbols.json, which "
         "`describe-api` reads); builds made before kernels 0.19 have none"),
    Code("invalid-symbols", "error", "symbols.json does not parse",
         "rebuild with `kernelkit build`; do not edit symbols.json by hand"),
    Code("bytecode", "warning", "Python bytecode inside the variant",
         "delete __pycache__/ and *.pyc; they are not covered by the digest and not published"),
    # --- metadata ---------------------------------------------------------------------------
    Code("missing-metadata", "error", "metadata.json missing",
         "every variant needs a metadata.json; rebuild with `kernelkit build`"),
    Code("invalid-metadata", "error", "metadata.json does not parse",
         "rebuild with `kernelkit build`; do not edit metadata.json by hand"),
    Code("backend-mismatch", "error", "metadata backend differs from the variant name",
         "the variant was built for another backend than its directory says; rebuild it"),
    Code("bad-id", "error", "metadata id is not _<python_name>_<backend>_<unique id>",
         "rebuild with `kernelkit build` so the op namespace is unique to this build"),
    Code("inconsistent-kernel", "error", "variants disagree on kernel name or version",
         "all variants of one build tree must come from the same kernel and version; "
         "remove stale variants and rebuild"),
    Code("namespace-mismatch", "warning", "variants of one backend use different op namespaces",
         "the variants were built from different source trees; rebuild all of them together"),
    Code("dirty-build", "warning", "built from a source tree with uncommitted changes",
         "commit your changes and rebuild, so the build can be traced to a commit"),
    # --- digest -----------------------------------------------------------------------------
    Code("missing-digest", "error", "metadata.json has no digest",
         "rebuild with `kernelkit build` (it seals each variant with digests of its files)"),
    Code("digest-mismatch", "error", "files do not match the digest in metadata.json",
         "a file changed, appeared or disappeared after the build; rebuild the variant"),
    # --- ELF --------------------------------------------------------------------------------
    Code("unreadable-elf", "error", "shared library cannot be read as ELF",
         "rebuild the variant; the file is corrupt or not a Linux shared library"),
    Code("manylinux", "error", "symbol version newer than manylinux_2_28 allows",
         "kernelkit build shims or statically links the libstdc++ pieces it knows (e.g. "
         "std::to_chars for floating point); for any other symbol avoid the function or build "
         "in a manylinux_2_28 image (its GCC toolset links newer libstdc++ code statically)"),
    Code("abi3", "error", "Python symbol outside the stable ABI (abi3, Python 3.9)",
         "use only the limited API of Python 3.9 (define Py_LIMITED_API=0x03090000); torch "
         "extensions need no Python API beyond module creation"),
    Code("torch-stable-abi", "error", "stable-ABI variant uses libtorch's C++ ABI",
         "a torch-stable-abi variant may call libtorch only through its stable C ABI: include "
         "only torch/csrc/stable/... and torch/headeronly/... headers (not torch/torch.h, ATen "
         "or c10), use torch::stable::Tensor and STABLE_TORCH_LIBRARY, or drop "
         "[torch.stable-abi] for this backend"),
    Code("torch-stable-abi-version", "error", "stable-ABI variant uses a newer stable C shim",
         "the shim is newer than the variant's stable-ABI version: raise [torch.stable-abi] "
         "to that torch version, or avoid the function (build sets TORCH_TARGET_VERSION so "
         "the headers hide newer shims)"),
    Code("tvm-ffi-links-torch", "error", "tvm-ffi variant links libtorch",
         "a [tvm-ffi] kernel exchanges tensors through DLPack: include only <tvm/ffi/...> "
         "headers, drop torch from its sources and link flags, or make it a [torch] kernel"),
    Code("tvm-ffi-no-runtime", "error", "tvm-ffi variant does not link libtvm_ffi",
         "build it with `kernelkit build` (it links apache-tvm-ffi's libtvm_ffi.so through "
         "tvm_ffi_configure_target)"),
    Code("needed-library", "error", "depends on a library outside torch and the C runtime",
         "link the library statically or drop the dependency; only torch's libraries, the "
         "CUDA runtime libraries and the C/C++ runtime may be loaded"),
    Code("rpath", "error", "RPATH/RUNPATH points outside the variant",
         "clear it (patchelf --remove-rpath, or CMake's INSTALL_RPATH \"\") or use $ORIGIN-"
         "relative entries only"),
    # --- ops ----------------------------------------------------------------------------------
    Code("op-registration", "error", "op registered without add_op_namespace_prefix",
         "register with the build's namespace: e.g. "
         "@torch.library.register_fake(add_op_namespace_prefix(\"my_op\")) "
         "with `from ._ops import add_op_namespace_prefix`"),
    Code("ops-namespace", "error", "_ops.py does not expose the build's namespace",
         "_ops.py must define ops = torch.ops.<metadata id> and add_op_namespace_prefix; "
         "rebuild with `kernelkit build`"),
    Code("fixed-namespace", "error", "ops registered outside the build's namespace",
         "register with TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, ops) (registration.h) in "
         "C++, or add_op_namespace_prefix(\"op\") in Python: a fixed or shared namespace "
         "aborts Python when two builds of the kernel load in one process (\"Only a single "
         "TORCH_LIBRARY can be used to register the namespace\")"),
    Code("no-kernel", "error", "op declared without an implementation for the backend",
         "add ops.impl(\"op\", torch::kCPU, &fn) (kCUDA for CUDA) next to ops.def in the "
         "binding, or register a CompositeExplicitAutograd kernel; otherwise calling the op "
         "raises NotImplementedError"),
    Code("no-fake", "warning", "op without a fake (meta) implementation",
         "register one with @torch.library.register_fake(add_op_namespace_prefix(\"op\")) so "
         "torch.compile and opcheck can trace the op"),
    Code("import-failed", "error", "the variant does not import",
         "run the import command shown to see the full traceback"),
    Code("import-skipped", "warning", "import not tried: interpreter does not match the variant",
         "pass an interpreter whose torch matches the variant (--python, or --variant-python "
         "VARIANT=PYTHON)"),
)

CODES: dict[str, Code] = {c.code: c for c in _CODES}


def code(name: str) -> Code:
    """The entry for ``name``; a KeyError is a programming error in a rule."""
    return CODES[name]
