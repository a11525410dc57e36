"""Checks that span fields: run on the model after reading, problems go to the same ``Reader``.

Two deliberate differences from upstream ``kernel-builder``:

* a ``[kernel.<name>]`` whose ``backend`` is not listed in ``general.backends`` is a problem
  (upstream silently never builds it, which hides typos and forgotten backends);
* ``python-depends`` ids are checked here, when the manifest is read, instead of at
  file-generation time, and source/include paths are checked to exist when the project root is
  known (upstream lets the compiler fail later).
"""

from __future__ import annotations

import re
from pathlib import Path

from kernelkit.manifest.deps import python_dependency_ids
from kernelkit.manifest.model import KERNEL_BACKENDS, Manifest, TorchNoarch
from kernelkit.manifest.values import Reader
from kernelkit.util.names import is_ref_name, is_repo_id
from kernelkit.util.quote import cmake_refusal, is_kernel_name

_PATH_SPECIALS = '"$`*?<>|'
_PYEXT = re.compile(r"[A-Za-z0-9_]{1,32}")


def check_manifest(manifest: Manifest, r: Reader, root: Path | None,
                   check_sources: bool) -> None:
    """Record every cross-field problem of ``manifest`` in ``r``."""
    check_kernel_backends(manifest, r)
    check_python_depends(manifest, r)
    check_source_paths(manifest, r)
    check_generated_values(manifest, r)
    check_hub_names(manifest, r)
    if check_sources and root is not None:
        check_sources_exist(manifest, r, root)


def check_kernel_backends(manifest: Manifest, r: Reader) -> None:
    if any(p.field == "general.backends" for p in r.problems):
        return  # the list is missing or not a list; do not pile on
    listed = manifest.general.backends
    for kernel in manifest.kernels:
        if kernel.backend in KERNEL_BACKENDS and kernel.backend not in listed:
            r.problem(f"kernel.{kernel.name}.backend",
                      f"backend `{kernel.backend}` of [kernel.{kernel.name}] is not listed in "
                      f"general.backends ({', '.join(listed)}); add it there or remove this kernel")


def check_python_depends(manifest: Manifest, r: Reader) -> None:
    general = manifest.general
    _check_ids(r, "general.python-depends", general.python_depends, None)
    for backend in ("cuda", "neuron", "tpu", "xpu"):
        extra = getattr(general, backend)
        if extra is not None:
            _check_ids(r, f"general.{backend}.python-depends", extra.python_depends, backend)


def _check_ids(r: Reader, field: str, ids: tuple[str, ...], backend: str | None) -> None:
    if r.has_problem(field):
        return
    allowed = python_dependency_ids(backend)
    for i, dep in enumerate(ids):
        if allowed is None:
            r.problem(f"{field}[{i}]", f"no Python dependencies are defined for backend "
                      f"{backend}; remove `{dep}`")
        elif dep not in allowed:
            scope = f"backend {backend}" if backend else "all backends"
            known = ", ".join(allowed) or "none"
            r.problem(f"{field}[{i}]", f"unknown Python dependency `{dep}` for {scope}; "
                      f"known ids: {known}")


def _path_fields(manifest: Manifest) -> list[tuple[str, tuple[str, ...], bool]]:
    """``(field, paths, is_directory)`` of every source and include list."""
    out: list[tuple[str, tuple[str, ...], bool]] = []
    framework = manifest.framework
    if not isinstance(framework, TorchNoarch):
        out += [(f"{framework.kind}.src", framework.src, False),
                (f"{framework.kind}.include", framework.include, True)]
    for kernel in manifest.kernels:
        out += [(f"kernel.{kernel.name}.src", kernel.src, False),
                (f"kernel.{kernel.name}.include", kernel.include, True)]
    return out


def unsafe_path(rel: str) -> str | None:
    """Why a source/include path may not be used (``None``: it is fine). Paths stay inside
    the project: relative, '/'-separated, no ``..``, one CMake value (``cmake_refusal``), and
    none of ``"$`*?<>|`` (no file of a kernel needs them; CMake and shells give them meaning:
    CMake's Ninja generator writes a source's dependency-file path unescaped into the compile
    command, so a ``$`` there would reach the shell)."""
    if not rel:
        return "is empty"
    if rel.startswith("/") or "\\" in rel or (len(rel) > 1 and rel[1] == ":"):
        return "is absolute; use a path relative to the project directory"
    if ".." in rel.split("/"):
        return "leaves the project directory ('..'); keep sources inside the project"
    why = cmake_refusal(rel)
    if why is not None:
        return why
    bad = sorted(set(rel) & set(_PATH_SPECIALS))
    if bad:
        return f"holds {' '.join(bad)}; use letters, digits and '._-+/' in source paths"
    return None


def check_source_paths(manifest: Manifest, r: Reader) -> None:
    for field, paths, _ in _path_fields(manifest):
        if r.has_problem(field):
            continue
        for i, rel in enumerate(paths):
            why = unsafe_path(rel)
            if why is not None:
                r.problem(f"{field}[{i}]", f"path `{rel[:200]}` {why}")


def check_sources_exist(manifest: Manifest, r: Reader, root: Path) -> None:
    framework = manifest.framework
    if not isinstance(framework, TorchNoarch):
        _check_paths(r, root, f"{framework.kind}.src", framework.src, directory=False)
        _check_paths(r, root, f"{framework.kind}.include", framework.include, directory=True)
    for kernel in manifest.kernels:
        field = f"kernel.{kernel.name}"
        _check_paths(r, root, f"{field}.src", kernel.src, directory=False)
        _check_paths(r, root, f"{field}.include", kernel.include, directory=True)


def _check_paths(r: Reader, root: Path, field: str, paths: tuple[str, ...],
                 directory: bool) -> None:
    if r.has_problem(field):
        return
    for i, rel in enumerate(paths):
        if unsafe_path(rel) is not None:
            continue  # reported by check_source_paths
        path = root / rel
        ok = path.is_dir() if directory else path.is_file()
        if not ok:
            what = "include directory" if directory else "source file"
            r.problem(f"{field}[{i}]", f"{what} `{rel}` does not exist (looked in {root}); "
                      "fix the path or create the file")


# --- values that reach generated files (util/quote.py) --------------------------------------


def _flag_fields(manifest: Manifest) -> list[tuple[str, tuple[str, ...]]]:
    framework = manifest.framework
    out = [] if isinstance(framework, TorchNoarch) else [
        (f"{framework.kind}.cxx-flags", framework.cxx_flags)]
    for k in manifest.kernels:
        field = f"kernel.{k.name}"
        out += [(f"{field}.cxx-flags", k.cxx_flags), (f"{field}.cuda-flags", k.cuda_flags),
                (f"{field}.hip-flags", k.hip_flags), (f"{field}.sycl-flags", k.sycl_flags)]
    return out


def check_generated_values(manifest: Manifest, r: Reader) -> None:
    """Kernel names (written bare into CMake and setup.py), compile flags (CMake values) and
    ``pyext`` (file-name globs): the grammars of ``kernelkit.util.quote``."""
    for k in manifest.kernels:
        if not is_kernel_name(k.name):
            r.problem(f"kernel.{k.name}", f"invalid kernel name {k.name[:100]!r}: use letters, "
                      "digits, '_', '.' and '-', starting with a letter or '_' (at most 100 "
                      "characters; e.g. [kernel.relu_cuda])")
    for field, flags in _flag_fields(manifest):
        for i, flag in enumerate(flags):
            why = "is empty" if not flag else cmake_refusal(flag)
            if why is not None:
                r.problem(f"{field}[{i}]", f"compile flag {flag[:100]!r} {why}; pass one flag "
                          "per string, on one line")
    for i, ext in enumerate(manifest.framework.pyext):
        if _PYEXT.fullmatch(ext) is None:
            r.problem(f"{manifest.framework.kind}.pyext[{i}]", f"invalid file extension "
                      f"{ext[:100]!r}: use letters, digits and '_', without the dot (e.g. "
                      '"json")')


def check_hub_names(manifest: Manifest, r: Reader) -> None:
    """``[general.hub]`` and ``kernel-depends`` name repositories and refs: the hub's grammar
    (``kernelkit.util.names``), so check-config refuses what upload and get_kernel would."""
    hub = manifest.general.hub
    if hub.repo_id is not None and not is_repo_id(hub.repo_id):
        r.problem("general.hub.repo-id", f"invalid repository id {hub.repo_id[:100]!r}: use "
                  "<org>/<name> with letters, digits, '.', '_' and '-' (e.g. \"acme/relu\")")
    if hub.branch is not None and not is_ref_name(hub.branch):
        r.problem("general.hub.branch", f"invalid branch name {hub.branch[:100]!r}: use "
                  "letters, digits, '.', '_', '+', '-' and '/' (e.g. \"v1\")")
