"""Read the raw ``tomllib`` dict of one edition (5, 4 or 3) into the edition-5 model.

The schema rules of each edition (§1.2, §1.5 of the upstream spec) are the key sets below;
every table denies unknown keys, as upstream does. Reading never stops at the first problem:
ill-typed values become problems and placeholders, and the caller throws the model away when
``Reader.problems`` is not empty.
"""

from __future__ import annotations

from typing import Any

from kernelkit.manifest.deps import DEPENDENCY_IDS
from kernelkit.manifest.model import (
    BACKENDS,
    KERNEL_BACKENDS,
    NAME_RE,
    BackendGeneral,
    Framework,
    General,
    Hub,
    KernelComponent,
    KernelDependency,
    Manifest,
    TorchFramework,
    TorchNoarch,
    TvmFfi,
    Version,
)
from kernelkit.manifest.values import Reader, join, type_name
from kernelkit.util.names import is_ref_name, is_repo_id

FRAMEWORKS: tuple[str, ...] = ("torch", "torch-noarch", "tvm-ffi")


def _keys(edition: int, base: tuple[str, ...], since: dict[str, int]) -> tuple[str, ...]:
    """``base`` plus the keys of ``since`` (key -> first edition) that ``edition`` has."""
    return base + tuple(key for key, first in since.items() if edition >= first)


def general_keys(edition: int) -> tuple[str, ...]:
    base = ("name", "version", "license", "upstream", "backends", "python-depends",
            "hub", "cuda", "neuron", "xpu")
    return _keys(edition, base, {"source": 4, "edition": 5, "kernel-depends": 5, "tpu": 5})


def backend_general_keys(backend: str, edition: int) -> tuple[str, ...]:
    base = ("minver", "maxver", "python-depends") if backend == "cuda" else ("python-depends",)
    if backend == "tpu":
        return base
    return _keys(edition, base, {"kernel-depends": 5})


def framework_keys(kind: str, edition: int) -> tuple[str, ...]:
    if kind == "torch":
        return _keys(edition, ("src", "include", "pyext", "minver", "maxver"),
                     {"stable-abi": 4, "cxx-flags": 4})
    if kind == "tvm-ffi":
        return _keys(edition, ("src", "include", "pyext"), {"cxx-flags": 4})
    return ("pyext", "cuda_capabilities", "rocm_archs")  # torch-noarch: snake_case upstream


KERNEL_COMMON_KEYS = ("backend", "src", "depends", "include", "cxx-flags")
KERNEL_EXTRA_KEYS: dict[str, tuple[str, ...]] = {
    "cpu": (),
    "cuda": ("cuda-capabilities", "cuda-flags", "cuda-minver"),
    "metal": (),
    "rocm": ("rocm-archs", "hip-flags"),
    "xpu": ("sycl-flags",),
}


def read_build(raw: dict[str, Any], edition: int, r: Reader) -> Manifest:
    """The model of ``raw`` read with ``edition``'s rules; check ``r.problems`` before use."""
    frameworks = FRAMEWORKS if edition >= 4 else ("torch", "tvm-ffi")
    r.table(raw, "", ("general", *frameworks, "kernel"))
    general = read_general(raw.get("general"), edition, r)
    framework = read_framework(raw, frameworks, edition, r)
    kernels = read_kernels(raw.get("kernel", {}), r)
    return Manifest(general=general, framework=framework, kernels=kernels,
                    source_edition=edition)


# --- [general] ------------------------------------------------------------------------------


def read_general(value: Any, edition: int, r: Reader) -> General:
    if value is None:
        r.problem("general", "missing the [general] table (name, version, license, backends)")
    tbl = None if value is None else r.table(value, "general", general_keys(edition))
    if tbl is None:
        return General(name="", version=0, license="", backends=())
    name = r.string(tbl, "general", "name", required=True)
    if name is not None and not NAME_RE.match(name):
        r.problem("general.name", f"invalid kernel name {name!r}: use lowercase letters, digits "
                  "and '-', start with a letter and end with a letter or digit (e.g. \"img2gray\")")
    version = r.integer(tbl, "general", "version", required=edition >= 4)
    license_ = r.string(tbl, "general", "license", required=edition >= 4)
    if edition == 3 and "license" not in tbl:
        r.problem("general.license", "the `license` key is required in [general] "
                  "(e.g. license = \"Apache-2.0\")")
    backends = r.choices(tbl, "general", "backends", BACKENDS, "backend", required=True)
    return General(
        name=name or "",
        version=1 if version is None else version,
        license=license_ or "",
        backends=backends or (),
        upstream=r.git_url(tbl, "general", "upstream"),
        source=r.git_url(tbl, "general", "source"),
        python_depends=r.strings(tbl, "general", "python-depends") or (),
        kernel_depends=read_kernel_depends(tbl, "general", r),
        hub=read_hub(tbl, r),
        cuda=read_backend_general(tbl, "cuda", edition, r),
        xpu=read_backend_general(tbl, "xpu", edition, r),
        neuron=read_backend_general(tbl, "neuron", edition, r),
        tpu=read_backend_general(tbl, "tpu", edition, r),
    )


def read_hub(general: dict[str, Any], r: Reader) -> Hub:
    if "hub" not in general:
        return Hub()
    tbl = r.table(general["hub"], "general.hub", ("repo-id", "branch")) or {}
    return Hub(repo_id=r.string(tbl, "general.hub", "repo-id"),
               branch=r.string(tbl, "general.hub", "branch"))


def read_backend_general(general: dict[str, Any], backend: str, edition: int,
                         r: Reader) -> BackendGeneral | None:
    if backend not in general:
        return None
    field = f"general.{backend}"
    tbl = r.table(general[backend], field, backend_general_keys(backend, edition)) or {}
    return BackendGeneral(
        minver=r.version(tbl, field, "minver"),
        maxver=r.version(tbl, field, "maxver"),
        kernel_depends=read_kernel_depends(tbl, field, r),
        python_depends=r.strings(tbl, field, "python-depends") or (),
    )


def read_kernel_depends(tbl: dict[str, Any], field: str,
                        r: Reader) -> tuple[KernelDependency, ...]:
    if "kernel-depends" not in tbl:
        return ()
    path = join(field, "kernel-depends")
    value = tbl["kernel-depends"]
    if not isinstance(value, list):
        r.problem(path, f"expected an array of tables like {{ repo-id = \"org/name\", "
                  f"version = 1 }}, got {type_name(value)}")
        return ()
    deps = (read_kernel_dependency(item, f"{path}[{i}]", r) for i, item in enumerate(value))
    return tuple(d for d in deps if d is not None)


def read_kernel_dependency(value: Any, path: str, r: Reader) -> KernelDependency | None:
    tbl = r.table(value, path, ("repo-id", "version", "revision"))
    if tbl is None:
        return None
    repo_id = r.string(tbl, path, "repo-id", required=True)
    if repo_id is not None and not is_repo_id(repo_id):
        r.problem(join(path, "repo-id"), f"invalid repo id {repo_id[:100]!r}: expected "
                  "\"org/name\" (letters, digits, '.', '_', '-')")
    if ("version" in tbl) == ("revision" in tbl):
        r.problem(path, "a kernel dependency needs exactly one of `version` (an integer) "
                  "or `revision` (a string)")
    version = r.integer(tbl, path, "version")
    revision = r.string(tbl, path, "revision")
    if revision is not None and not is_ref_name(revision):
        r.problem(join(path, "revision"), f"invalid revision {revision[:100]!r}: a branch, "
                  "tag or commit id (letters, digits, '.', '_', '+', '-', '/')")
    return KernelDependency(repo_id=repo_id or "", version=version, revision=revision)


# --- framework ------------------------------------------------------------------------------


def read_framework(raw: dict[str, Any], allowed: tuple[str, ...], edition: int,
                   r: Reader) -> Framework:
    present = [k for k in allowed if k in raw]
    if not present:
        if edition == 3:
            return TorchNoarch()  # v3: no framework table means noarch
        r.problem("", "no framework table: add one of [torch], [torch-noarch] or [tvm-ffi]")
        return TorchFramework()
    for extra in present[1:]:
        r.problem(extra, f"more than one framework table ([{present[0]}] and [{extra}]); "
                  "keep exactly one")
    kind = present[0]
    tbl = r.table(raw[kind], kind, framework_keys(kind, edition))
    if tbl is None:
        return TorchFramework()
    if kind == "torch-noarch":
        return TorchNoarch(
            pyext=_pyext(tbl, kind, r),
            cuda_capabilities=r.capabilities(tbl, kind, "cuda_capabilities") or (),
            rocm_archs=r.strings(tbl, kind, "rocm_archs") or (),
        )
    src = r.strings(tbl, kind, "src", required=kind == "tvm-ffi") or ()
    include = r.strings(tbl, kind, "include") or ()
    cxx_flags = r.strings(tbl, kind, "cxx-flags") or ()
    if kind == "tvm-ffi":
        return TvmFfi(src=src, include=include, pyext=_pyext(tbl, kind, r), cxx_flags=cxx_flags)
    return TorchFramework(
        src=src, include=include, pyext=_pyext(tbl, kind, r),
        minver=r.version(tbl, kind, "minver"), maxver=r.version(tbl, kind, "maxver"),
        stable_abi=read_stable_abi(tbl, edition, r), cxx_flags=cxx_flags,
    )


def _pyext(tbl: dict[str, Any], field: str, r: Reader) -> tuple[str, ...]:
    pyext = r.strings(tbl, field, "pyext")
    return ("py", "pyi") if pyext is None else pyext


def read_stable_abi(tbl: dict[str, Any], edition: int,
                    r: Reader) -> Version | dict[str, Version] | None:
    value = tbl.get("stable-abi")
    if value is None or isinstance(value, str) or edition < 5:
        return None if value is None else r.version_value(value, "torch.stable-abi")
    if not isinstance(value, dict):
        r.problem("torch.stable-abi", "expected a version string (all backends) or a table "
                  f"such as {{ cuda = \"2.11\" }}, got {type_name(value)}")
        return None
    table: dict[str, Version] = {}
    for backend, ver in value.items():
        path = f"torch.stable-abi.{backend}"
        if backend not in BACKENDS:
            r.problem(path, f"unknown backend `{backend}`; expected one of: {', '.join(BACKENDS)}")
        parsed = r.version_value(ver, path)
        if parsed is not None:
            table[backend] = parsed
    return table


# --- [kernel.<name>] ------------------------------------------------------------------------


def read_kernels(value: Any, r: Reader) -> tuple[KernelComponent, ...]:
    if not isinstance(value, dict):
        r.problem("kernel", f"expected a table of [kernel.<name>] tables, got {type_name(value)}")
        return ()
    return tuple(read_kernel(name, tbl, r) for name, tbl in value.items())


def read_kernel(name: str, value: Any, r: Reader) -> KernelComponent:
    field = f"kernel.{name}"
    if not isinstance(value, dict):
        r.problem(field, f"expected a table, got {type_name(value)}")
        return KernelComponent(name=name, backend="", src=(), depends=())
    backend = r.string(value, field, "backend", required=True)
    if backend is not None and backend not in KERNEL_BACKENDS:
        r.problem(f"{field}.backend", f"unknown kernel backend `{backend}`; expected one of: "
                  f"{', '.join(KERNEL_BACKENDS)}")
    all_extra = tuple(k for keys in KERNEL_EXTRA_KEYS.values() for k in keys)
    tbl = r.table(value, field, KERNEL_COMMON_KEYS + all_extra) or {}
    if backend in KERNEL_EXTRA_KEYS:
        for key in [k for k in tbl if k in all_extra and k not in KERNEL_EXTRA_KEYS[backend]]:
            owner = next(b for b, keys in KERNEL_EXTRA_KEYS.items() if key in keys)
            r.problem(f"{field}.{key}", f"`{key}` applies to {owner} kernels only, not to "
                      f"backend `{backend}`; remove it")
            del tbl[key]
    return KernelComponent(
        name=name,
        backend=backend or "",
        src=r.strings(tbl, field, "src", required=True) or (),
        depends=r.choices(tbl, field, "depends", DEPENDENCY_IDS, "dependency",
                          required=True) or (),
        include=r.strings(tbl, field, "include") or (),
        cxx_flags=r.strings(tbl, field, "cxx-flags") or (),
        cuda_capabilities=r.capabilities(tbl, field, "cuda-capabilities"),
        cuda_flags=r.strings(tbl, field, "cuda-flags") or (),
        cuda_minver=r.version(tbl, field, "cuda-minver"),
        rocm_archs=r.strings(tbl, field, "rocm-archs"),
        hip_flags=r.strings(tbl, field, "hip-flags") or (),
        sycl_flags=r.strings(tbl, field, "sycl-flags") or (),
    )
