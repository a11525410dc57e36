"""``metadata.json`` of a build variant (upstream-builder.md §3.7, upstream-loader.md §2.12).

Keys are kebab-case and written in a fixed order; unknown keys are ignored when reading
(forward compatible). Written with 2-space indentation and no trailing newline.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kernelkit.artifact.digest import Digest
from kernelkit.errors import InputFileError, MetadataError
from kernelkit.util.fs import atomic_write_text
from kernelkit.util.inputs import MAX_JSON_BYTES, parse_json, read_input

_COMMIT_RE = re.compile(r"^([0-9a-f]{40}|[0-9a-f]{64})\Z")
#: ``kernels-minver``: exactly three dot-separated numbers, as upstream's reader requires
_MINVER_RE = re.compile(r"[0-9]{1,9}\.[0-9]{1,9}\.[0-9]{1,9}")
NAME_RE = re.compile(r"^[a-z][-a-z0-9]*[a-z0-9]\Z")
#: ``id`` names the torch ops namespace; it is checked, and never used as a module name.
ID_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,199}")
#: ``build-layout`` values (kernels >= 0.19): ``files`` (the package's files in the variant,
#: the default) or ``zip`` (the package in ``<id>.zip``, compiled extensions beside it).
BUILD_LAYOUTS = ("files", "zip")


@dataclass(frozen=True)
class Commit:
    commit: str
    dirty: bool


@dataclass(frozen=True)
class Provenance:
    """``provenance``: upstream readers require a ``kernel-builder`` object, so the builder is
    recorded there (version ``kernelkit/<version>``); kernelkit's own extras (toolchain pins,
    variant inputs) go in a separate ``kernelkit`` object, which upstream readers ignore."""

    builder_version: str = ""
    builder_commit: Commit | None = None
    kernel: Commit | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def dirty(self) -> bool:
        return bool((self.kernel and self.kernel.dirty)
                    or (self.builder_commit and self.builder_commit.dirty))


@dataclass(frozen=True)
class Metadata:
    name: str
    id: str
    version: int
    license: str
    backend: str
    archs: tuple[str, ...] | None = None
    upstream: str | None = None
    source: str | None = None
    python_depends: tuple[str, ...] = ()
    kernel_depends: tuple[dict[str, Any], ...] = ()
    digest: Digest | None = None
    provenance: Provenance | None = None
    build_layout: str = "files"
    #: ``kernels-minver``: the oldest upstream ``kernels`` loader that may load this build
    kernels_minver: tuple[int, int, int] | None = None

    @property
    def python_name(self) -> str:
        return self.name.replace("-", "_")

    def with_digest(self, digest: Digest) -> Metadata:
        return replace(self, digest=digest)

    # --- serialisation ---------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "id": self.id, "version": self.version,
                               "license": self.license}
        if self.kernels_minver is not None:
            out["kernels-minver"] = ".".join(str(p) for p in self.kernels_minver)
        if self.upstream is not None:
            out["upstream"] = self.upstream
        if self.source is not None:
            out["source"] = self.source
        out["python-depends"] = list(self.python_depends)
        out["kernel-depends"] = [dict(d) for d in self.kernel_depends]
        backend: dict[str, Any] = {"type": self.backend}
        if self.archs is not None:
            backend["archs"] = list(self.archs)
        out["backend"] = backend
        if self.build_layout != "files":  # absent means files: older readers see no change
            out["build-layout"] = self.build_layout
        if self.digest is not None:
            out["digest"] = self.digest.to_json()
        if self.provenance is not None:
            out["provenance"] = _provenance_to_json(self.provenance)
        return out

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=2, ensure_ascii=False)

    def write(self, path: Path) -> None:
        atomic_write_text(path, self.dumps())

    @classmethod
    def from_json(cls, data: Any, source: Path | str = "metadata.json") -> Metadata:
        if not isinstance(data, dict):
            raise MetadataError(source, "top level must be a JSON object")
        try:
            return _from_json(data)
        except (KeyError, TypeError, ValueError) as exc:
            raise MetadataError(source, str(exc)) from None

    @classmethod
    def loads(cls, raw: bytes | str, source: Path | str = "metadata.json") -> Metadata:
        """Parse the text of a ``metadata.json``; bad JSON is a ``MetadataError`` too."""
        return cls.from_json(load_json(raw, source), source)

    @classmethod
    def read(cls, path: Path) -> Metadata:
        return cls.loads(read_bytes(path), path)


def read_bytes(path: Path) -> bytes:
    """The bytes of a ``metadata.json`` through the one bounded reader; ``MetadataError``
    for a missing, irregular or oversized file."""
    try:
        return read_input(path, MAX_JSON_BYTES)
    except (FileNotFoundError, NotADirectoryError):
        raise MetadataError(path, "file not found") from None
    except InputFileError as exc:
        raise MetadataError(path, exc.reason) from None


def load_json(raw: bytes | str, source: Path | str = "metadata.json") -> Any:
    """The parsed JSON of a ``metadata.json`` (what its digest covers); ``MetadataError`` for
    anything that is not JSON."""
    try:
        return parse_json(raw, source)
    except InputFileError as exc:
        line = f" (line {exc.line})" if exc.line is not None else ""
        raise MetadataError(source, exc.reason + line) from None


def _req(data: dict[str, Any], key: str, typ: type) -> Any:
    if key not in data:
        raise KeyError(f"missing required key {key!r}")
    val = data[key]
    if (typ is int and isinstance(val, bool)) or not isinstance(val, typ):
        raise TypeError(f"{key!r} must be a {typ.__name__}")
    return val


def _from_json(data: dict[str, Any]) -> Metadata:
    name = _req(data, "name", str)
    if not NAME_RE.match(name) or len(name) > 200:
        raise ValueError(f"name {name[:80]!r} is not a valid kernel name")
    backend = _req(data, "backend", dict)
    btype = _req(backend, "type", str)
    archs = backend.get("archs")
    if archs is not None and not (
        isinstance(archs, list) and all(isinstance(a, str) for a in archs)
    ):
        raise TypeError("backend.archs must be a list of strings")
    pydeps = data.get("python-depends", [])
    if not isinstance(pydeps, list) or not all(isinstance(d, str) for d in pydeps):
        raise TypeError("'python-depends' must be a list of strings")
    kdeps = data.get("kernel-depends", [])
    if not isinstance(kdeps, list) or not all(isinstance(d, dict) for d in kdeps):
        raise TypeError("'kernel-depends' must be a list of tables")
    digest = Digest.from_json(data["digest"]) if "digest" in data else None
    prov = _provenance_from_json(data["provenance"]) if "provenance" in data else None
    layout = data.get("build-layout", "files")
    if layout not in BUILD_LAYOUTS:
        raise ValueError(f"'build-layout' must be one of {', '.join(BUILD_LAYOUTS)}, not "
                         f"{str(layout)[:40]!r}")
    kernel_id = _req(data, "id", str)
    if not ID_RE.fullmatch(kernel_id):
        raise ValueError(f"id {kernel_id[:80]!r} is not a Python identifier")
    return Metadata(
        name=name,
        id=kernel_id,
        version=_req(data, "version", int),
        license=_req(data, "license", str),
        backend=btype,
        archs=tuple(archs) if archs is not None else None,
        upstream=_opt_str(data, "upstream"),
        source=_opt_str(data, "source"),
        python_depends=tuple(pydeps),
        kernel_depends=tuple(kdeps),
        digest=digest,
        provenance=prov,
        build_layout=layout,
        kernels_minver=_minver(data),
    )


def _minver(data: dict[str, Any]) -> tuple[int, int, int] | None:
    value = data.get("kernels-minver")
    if value is None:
        return None
    if not isinstance(value, str) or not _MINVER_RE.fullmatch(value):
        raise ValueError(f"'kernels-minver' must be a version string x.y.z, got {value!r:.80}")
    major, minor, patch = (int(p) for p in value.split("."))
    return major, minor, patch


def _opt_str(data: dict[str, Any], key: str) -> str | None:
    val = data.get(key)
    if val is not None and not isinstance(val, str):
        raise TypeError(f"{key!r} must be a string")
    return val


def _commit_from_json(data: Any, where: str) -> Commit | None:
    if not isinstance(data, dict):
        raise TypeError(f"{where} must be an object")
    commit = data.get("commit", data.get("sha"))
    if commit is None and "dirty" not in data:
        return None
    if not isinstance(commit, str) or not _COMMIT_RE.match(commit):
        raise ValueError(f"{where}.commit must be 40 or 64 lowercase hex characters")
    if not isinstance(data.get("dirty"), bool):
        raise ValueError(f"{where}.dirty must be given with commit (true or false)")
    return Commit(commit, data["dirty"])


def _provenance_from_json(data: Any) -> Provenance:
    if not isinstance(data, dict):
        raise TypeError("provenance must be an object")
    builder = data.get("kernel-builder")
    if not isinstance(builder, dict):
        raise TypeError("provenance.kernel-builder must be an object")
    kernel = _commit_from_json(data["kernel"], "provenance.kernel") if "kernel" in data else None
    extra = data.get("kernelkit", {})
    if not isinstance(extra, dict):
        raise TypeError("provenance.kernelkit must be an object")
    return Provenance(
        builder_version=str(builder.get("version", "")),
        builder_commit=_commit_from_json(builder, "provenance.kernel-builder"),
        kernel=kernel,
        extra=dict(extra),
    )


def _provenance_to_json(p: Provenance) -> dict[str, Any]:
    builder: dict[str, Any] = {"version": p.builder_version}
    if p.builder_commit is not None:
        builder["commit"] = p.builder_commit.commit
        builder["dirty"] = p.builder_commit.dirty
    out: dict[str, Any] = {"kernel-builder": builder}
    if p.kernel is not None:
        out["kernel"] = {"commit": p.kernel.commit, "dirty": p.kernel.dirty}
    if p.extra:
        out["kernelkit"] = dict(p.extra)
    return out
