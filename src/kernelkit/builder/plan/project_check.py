"""What is wrong with a project for the builds the matrix plans, found without compiling.

One place for the project errors the planner knows, so that ``check-config``, ``list-variants``,
``build --dry-run`` and ``build`` agree: the package directory (``torch-ext/<python_name>/``)
is missing, a CUDA component's declared capabilities leave none that a toolkit of the
matrix compiles, or a ROCm component's architectures none of the supported ones (ROCm is not
compiled by kernelkit, but a build.toml that upstream refuses is wrong here too). Each is a
:class:`~kernelkit.errors.Problem` naming the field and its line.
"""

from __future__ import annotations

from kernelkit.builder.plan.package import package_dir
from kernelkit.errors import Problem
from kernelkit.generate.cuda_archs import component_capabilities, default_capabilities
from kernelkit.manifest import Manifest
from kernelkit.manifest.locate import LineIndex
from kernelkit.manifest.model import KernelComponent
from kernelkit.variants.matrix import load_matrix, targets_for


def package_problem(manifest: Manifest) -> str | None:
    """Why the package directory is unusable (``None``: it is there), saying which directory is
    expected and, when the extension directory holds another package, to rename that one.
    A manifest not read from a file (``parse_manifest`` of a text) has no project to look at."""
    if manifest.path is None:
        return None
    pkg = package_dir(manifest)
    if (pkg / "__init__.py").is_file():
        return None
    root = manifest.root
    rel = pkg.relative_to(root).as_posix()
    name = manifest.general.name
    ext = pkg.parent
    others = sorted(p.parent.name for p in ext.glob("*/__init__.py")) if ext.is_dir() else []
    why = (f"{rel}/__init__.py does not exist: the Python package of general.name = {name!r} is "
           f"{rel}/ (the name with '-' as '_')")
    if len(others) == 1:
        return why + f"; rename {ext.relative_to(root).as_posix()}/{others[0]}/ to {rel}/"
    return why + f"; create {rel}/__init__.py"


def _cuda_versions(manifest: Manifest) -> dict[str, list[str]]:
    """CUDA version -> the variants built with it, over every system of the matrix."""
    out: dict[str, list[str]] = {}
    for system in load_matrix().systems:
        for t in targets_for(manifest, system=system):
            if t.backend == "cuda" and t.kind != "noarch" and t.backend_version:
                out.setdefault(t.backend_version, []).append(t.variant)
    return out


def capability_problem(comp: KernelComponent, versions: list[str]) -> str | None:
    """Why ``comp``'s declared capabilities leave nothing to compile with the CUDA
    ``versions`` (``None``: each leaves some)."""
    declared = list(comp.cuda_capabilities) if comp.cuda_capabilities else None
    empty = [v for v in versions
             if not (comp.cuda_minver is not None and _older(v, str(comp.cuda_minver)))
             and not component_capabilities(declared, default_capabilities(v))]
    if not empty:
        return None
    known = sorted({c for v in empty for c in default_capabilities(v)}, key=_cap_key)
    return (f"cuda-capabilities {declared} leaves no capability to compile with CUDA "
            f"{', '.join(sorted(set(empty)))} (those toolkits compile {', '.join(known)}); "
            "use capabilities from that list")


def _cap_key(cap: str) -> tuple[int, int, str, bool]:
    base, ptx = cap.removesuffix("+PTX"), cap.endswith("+PTX")
    major, minor = base.split(".")
    digits = minor.rstrip("af")
    return int(major), int(digits), minor[len(digits):], ptx


def _older(version: str, minimum: str) -> bool:
    def key(text: str) -> tuple[int, ...]:
        return tuple(int(p) for p in text.split(".")[:2])
    return key(version) < key(minimum)


def project_problems(manifest: Manifest, *, check_sources: bool = True) -> list[Problem]:
    """Every project error the planner knows, each with its field and line in build.toml
    (``check_sources=False``: not the package directory)."""
    path = manifest.path
    text = path.read_text(encoding="utf-8") if path is not None and path.is_file() else ""
    index = LineIndex(text)
    out = []
    why = package_problem(manifest) if check_sources else None
    if why is not None:
        out.append(Problem(path, index.line_of("general.name"), "general.name", why))
    versions = _cuda_versions(manifest)
    for comp in sorted(manifest.kernels_for("cuda"), key=lambda k: k.name):
        why = capability_problem(comp, sorted(versions, key=lambda v: tuple(
            int(p) for p in v.split("."))))
        if why is not None:
            field = f"kernel.{comp.name}.cuda-capabilities"
            out.append(Problem(path, index.line_of(field), field, why))
    supported = load_matrix().rocm_archs
    for comp in sorted(manifest.kernels_for("rocm"), key=lambda k: k.name):
        if comp.rocm_archs and not set(comp.rocm_archs) & set(supported):
            field = f"kernel.{comp.name}.rocm-archs"
            out.append(Problem(path, index.line_of(field), field,
                               f"rocm-archs ({', '.join(comp.rocm_archs)}) has none of the "
                               "supported "
                               f"ROCm architectures ({', '.join(supported)}); use those"))
    return sorted(out, key=lambda p: (p.line or 0, p.field))
