"""Import each variant in a fresh interpreter and inspect its ops (namespace, fake kernels).

The interpreter must match the variant (torch version, CUDA/ROCm build); otherwise the import
is skipped with a warning naming what to pass, instead of reporting a false failure.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from kernelkit.artifact.metadata import Metadata
from kernelkit.check.report import Finding, finding
from kernelkit.util.run import run
from kernelkit.util.versions import major_minor
from kernelkit.variants.name import Variant

PROBE_SOURCE = (Path(__file__).parent / "_probe_source.py").read_text(encoding="utf-8")
_MARK = "KERNELKIT_PROBE="
IMPORT_TIMEOUT_S = 600.0


@dataclass(frozen=True)
class TorchEnv:
    python: Path
    torch: tuple[int, int] | None  # None: torch not importable
    cuda: tuple[int, int] | None
    hip: str | None
    error: str = ""
    tvm_ffi: tuple[int, int] | None = None

    def describe(self) -> str:
        if self.torch is None:
            return f"{self.python} (no usable torch: {self.error})"
        build = f"CUDA {self.cuda[0]}.{self.cuda[1]}" if self.cuda else (
            f"ROCm {self.hip}" if self.hip else "CPU")
        return f"{self.python} (torch {self.torch[0]}.{self.torch[1]}, {build})"


def _run_probe(python: Path, args: list[str]) -> tuple[dict[str, Any] | None, str]:
    with tempfile.TemporaryDirectory(prefix="kernelkit-check-") as cwd:
        try:
            proc = run([python, "-c", PROBE_SOURCE, *args], cwd=cwd, check=False,
                       timeout=IMPORT_TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return None, str(exc)
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(_MARK):
            return json.loads(line[len(_MARK):]), proc.stdout
    return None, proc.stdout


def _xy(text: str | None) -> tuple[int, int] | None:
    return major_minor(text) if text else None


@lru_cache(maxsize=16)
def probe_env(python: Path) -> TorchEnv:
    """What torch the interpreter has (one subprocess per interpreter, cached)."""
    data, output = _run_probe(python, ["env"])
    if data is None:
        tail = output.strip().splitlines()[-1:] or ["no output"]
        return TorchEnv(python, None, None, None, tail[0])
    return TorchEnv(python, _xy(data["torch"]), _xy(data["cuda"]), data["hip"],
                    tvm_ffi=_xy(data.get("tvm_ffi")))


def mismatch(variant: Variant, env: TorchEnv) -> str | None:
    """Why ``env`` cannot load ``variant`` (``None``: it can)."""
    if env.torch is None:
        return "it has no usable torch"
    fv = variant.framework_version
    if variant.framework == "tvm-ffi" and fv != env.tvm_ffi:
        have = f"{env.tvm_ffi[0]}.{env.tvm_ffi[1]}" if env.tvm_ffi else "none"
        return f"the variant needs apache-tvm-ffi {fv[0]}.{fv[1]} (it has {have})" if fv else \
            "the variant needs apache-tvm-ffi"
    if variant.framework == "torch" and fv is not None and fv != env.torch:
        return f"the variant needs torch {fv[0]}.{fv[1]}"
    if variant.framework == "torch-stable-abi" and fv is not None and env.torch < fv:
        return f"the variant needs torch >= {fv[0]}.{fv[1]}"
    if variant.backend == "cuda":
        want = variant.backend_version
        if env.cuda is None or (want is not None and env.cuda[0] != want[0]):
            return "the variant needs a CUDA build of torch" + (
                f" (CUDA {want[0]}.x)" if want else "")
    if variant.backend == "rocm" and env.hip is None:
        return "the variant needs a ROCm build of torch"
    if variant.backend not in ("cpu", "cuda", "rocm", "universal"):
        return f"the {variant.backend} backend is not import-checked"
    return None


def check_import(variant_dir: Path, variant: Variant, meta: Metadata, python: Path,
                 ) -> list[Finding]:
    """Import the variant with ``python`` (if it matches) and check its ops."""
    name = variant.name
    env = probe_env(python)
    why = mismatch(variant, env)
    if why is not None:
        return [finding("import-skipped", name, f"not imported with {env.describe()}: {why}",
                        fix=f"pass an interpreter for {name}: --variant-python "
                        f"{name}=/path/to/python (or --python)")]
    tvm = variant.framework == "tvm-ffi"
    mode = "tvm-ffi" if tvm else "import"
    data, output = _run_probe(python, [mode, str(variant_dir.resolve()), meta.id,
                                       variant.backend, meta.build_layout])
    if data is None:
        tail = "\n".join(output.strip().splitlines()[-12:])
        return [finding("import-failed", name, f"importing with {python} failed:\n{tail}",
                        file="__init__.py")]
    if tvm:
        return _tvm_ffi_findings(name, meta.id, data)
    out = _foreign_findings(name, meta.id, data)
    if data.get("import_error"):
        tail = "\n".join(str(data["import_error"]).strip().splitlines()[-12:])
        return [*out, finding("import-failed", name, f"importing with {python} failed:\n{tail}",
                              file="__init__.py")]
    return out + _ops_findings(name, check_namespace_expected(variant, meta, data), data,
                               variant.backend)


def check_namespace_expected(variant: Variant, meta: Metadata, data: dict[str, Any]) -> str:
    """The op namespace the variant's ``_ops.py`` must give. A noarch ``_ops.py`` follows the
    backend of the torch that imports it (``_<name>_<backend>_<id>``, spec §3.5), so a
    ``torch-cpu`` variant imported by a CUDA torch rightly names ``..._cuda_...``: any backend
    is accepted there, the name and unique id must be the variant's own."""
    ns = meta.id
    given = str(data.get("ops_namespace") or "")
    prefix = f"_{meta.python_name}_"
    suffix = ns[len(prefix) + len(variant.backend):] if ns.startswith(
        f"{prefix}{variant.backend}_") else None
    if variant.is_noarch and suffix and given.startswith(prefix) and given.endswith(suffix):
        backend = given[len(prefix):len(given) - len(suffix)]
        if backend.isalpha():
            return given
    return ns


def _tvm_ffi_findings(variant: str, ns: str, data: dict[str, Any]) -> list[Finding]:
    """A tvm-ffi ``_ops.py`` loads the build's module and prefixes names with its id."""
    if data.get("prefix") == f"{ns}::x" and str(data.get("ops_type", "")).startswith("tvm_ffi"):
        return []
    return [finding("ops-namespace", variant,
                    f"_ops.py gives torch_add_op_namespace_prefix('x') = {data.get('prefix')!r} "
                    f"and ops of type {data.get('ops_type')!r}; expected {ns + '::x'!r} and a "
                    "tvm_ffi module", file="_ops.py",
                    fix="rebuild with `kernelkit build` (its _ops.py loads the module with "
                    "tvm_ffi.load_module)")]


def _source_of(where: str) -> str:
    """``torch-ext/b.cpp:12`` from the dispatcher's ``../../torch-ext/b.cpp:12`` (the build maps
    the project to ``.``) or an absolute path of a Python file."""
    parts = where.split("/")
    while parts and parts[0] in ("", ".", ".."):
        parts = parts[1:]
    return "/".join(parts) if not where.startswith("/") else where


def _foreign_findings(variant: str, ns: str, data: dict[str, Any]) -> list[Finding]:
    """Ops the variant registered outside its namespace, grouped by namespace."""
    by_ns: dict[str, list[tuple[str, str]]] = {}
    for op, where in sorted(dict(data.get("foreign") or {}).items()):
        by_ns.setdefault(op.split("::")[0], []).append((op, _source_of(str(where))))
    out = []
    for other, ops in sorted(by_ns.items()):
        names = ", ".join(op for op, _ in ops[:4]) + (", ..." if len(ops) > 4 else "")
        wheres = sorted({w for _, w in ops if w})
        at = f" at {', '.join(wheres[:3])}" if wheres else ""
        file = wheres[0].rsplit(":", 1)[0] if wheres else None
        out.append(finding(
            "fixed-namespace", variant,
            f"{len(ops)} op(s) registered in namespace {other!r}{at} ({names}), not in the "
            f"build's {ns!r}: loading two builds of this kernel in one process aborts Python",
            file=file,
            fix=(f"in {file or 'the binding'}, register with "
                 "TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, ops) and "
                 "TORCH_LIBRARY_IMPL_EXPAND(TORCH_EXTENSION_NAME, <key>, ops) from "
                 f"registration.h instead of {other!r} (in Python: "
                 "add_op_namespace_prefix(\"op\") from ._ops)")))
    return out


_KEYS = {"cpu": "kCPU", "cuda": "kCUDA", "rocm": "kCUDA", "xpu": "kXPU", "metal": "kMPS"}


def _ops_findings(variant: str, ns: str, data: dict[str, Any],
                  backend: str = "") -> list[Finding]:
    out = []
    if data.get("prefix") != f"{ns}::x" or data.get("ops_namespace") != ns:
        out.append(finding(
            "ops-namespace", variant,
            f"_ops.py gives add_op_namespace_prefix('x') = {data.get('prefix')!r} and ops "
            f"namespace {data.get('ops_namespace')!r}; expected {ns + '::x'!r} and {ns!r}",
            file="_ops.py"))
    for op, facts in sorted(data.get("ops", {}).items()):
        if not (facts.get("backend", True) or facts["composite"]):
            short = op.split("::", 1)[-1]
            key = _KEYS.get(backend, "k<Backend>")
            out.append(finding(
                "no-kernel", variant,
                f"op {op} is declared but has no {backend} implementation and no composite "
                "one: calling it raises NotImplementedError",
                fix=f"add ops.impl(\"{short}\", torch::{key}, &your_function) next to its "
                    "ops.def (registration.h's TORCH_LIBRARY_EXPAND block in the binding), or "
                    "register a CompositeExplicitAutograd kernel"))
        if not (facts["meta"] or facts["fake"] or facts["composite"]):
            out.append(finding("no-fake", variant,
                               f"op {op} has no fake (meta) implementation"))
    return out
