"""Every environment variable kernelkit reads, declared once: its name, its default, its parser
and who reads it (huggingface_hub keeps its settings in one module the same way).

The process environment is touched here only: :func:`process_environ` is the edge (the CLI and
the public entry points take it, or a mapping a caller passes instead), and lower layers read a
declared variable from that mapping with its declaration (``KERNELKIT_CACHE.read(env)``), never
by a name of their own. Nothing is read at import time.

One parser per kind of value: :func:`parse_flag` is the one on/off parser (``1``/``true``/
``yes``/``on``, ``0``/``false``/``no``/``off``, any case; blank = the default), paths, whole
numbers, comma lists. docs/design.md's settings table is :func:`markdown_table` of
:data:`SETTINGS` (tests/unit/test_design_map.py fails when they differ;
``KERNELKIT_UPDATE_GOLDEN=1`` rewrites it).

Light on purpose: the loader's warm path imports this (no ``typing``, no dataclasses; the
errors module only when a value is refused).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

TRUE_WORDS = ("1", "true", "yes", "on")
FALSE_WORDS = ("0", "false", "no", "off")


def process_environ() -> Mapping[str, str]:
    """The process environment (live: a later change is seen), taken at the edge only."""
    return os.environ


def parse_flag(text: str | None, default: bool) -> bool | None:
    """The one on/off parser: ``True``/``False`` for the words above (any case, spaces
    around ignored), ``default`` when unset or blank, ``None`` for anything else."""
    if text is None or not text.strip():
        return default
    word = text.strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    return None


class Setting:
    """One variable: ``name``, ``default`` (as documented), ``kind`` (its parser, in words),
    ``read_by`` (the modules that read it) and ``doc`` (what it does)."""

    __slots__ = ("default", "doc", "name", "read_by")
    kind = "text"

    def __init__(self, name: str, *, default: str, read_by: str, doc: str) -> None:
        self.name, self.default, self.read_by, self.doc = name, default, read_by, doc

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"

    def raw(self, env: Mapping[str, str]) -> str | None:
        """The value as set (``None``: unset), unparsed."""
        return env.get(self.name)

    def is_set(self, env: Mapping[str, str]) -> bool:
        return self.name in env


class Text(Setting):
    """A string; unset or empty reads as ``None`` (``strip``: spaces around dropped first)."""

    __slots__ = ("strip",)

    def __init__(self, name: str, *, default: str, read_by: str, doc: str,
                 strip: bool = False) -> None:
        super().__init__(name, default=default, read_by=read_by, doc=doc)
        self.strip = strip

    def read(self, env: Mapping[str, str]) -> str | None:
        value = env.get(self.name)
        if value is not None and self.strip:
            value = value.strip()
        return value or None


class PathSetting(Setting):
    """A path; unset or empty reads as ``None`` (the caller's default applies)."""

    __slots__ = ()
    kind = "path"

    def read(self, env: Mapping[str, str]) -> Path | None:
        value = env.get(self.name)
        return Path(value) if value else None


class PathOrOff(Setting):
    """A directory, ``0`` to turn the thing off, unset or blank for the default."""

    __slots__ = ()
    kind = "path, or `0` = off"

    def off(self, env: Mapping[str, str]) -> bool:
        return (env.get(self.name) or "").strip() == "0"

    def read(self, env: Mapping[str, str]) -> Path | None:
        """The directory given (``None``: unset, blank or ``0``; ask :meth:`off` which)."""
        value = (env.get(self.name) or "").strip()
        return Path(value) if value and value != "0" else None


class Flag(Setting):
    """On/off through :func:`parse_flag`. Another word reads as the default, or, ``strict``,
    is a ``UsageError`` with ``hint``."""

    __slots__ = ("flag_default", "hint", "strict")
    kind = "on/off"

    def __init__(self, name: str, *, default: bool, read_by: str, doc: str,
                 strict: bool = False, hint: str = "") -> None:
        super().__init__(name, default="on" if default else "off", read_by=read_by, doc=doc)
        self.flag_default, self.strict, self.hint = default, strict, hint

    def read(self, env: Mapping[str, str]) -> bool:
        value = env.get(self.name)
        parsed = parse_flag(value, self.flag_default)
        if parsed is not None:
            return parsed
        if self.strict:
            from kernelkit.errors import UsageError

            raise UsageError(f"{self.name}={(value or '').strip().lower()!r} is not a boolean",
                        hint=self.hint or f"set {self.name} to 1 or 0, or unset it")
        return self.flag_default


class Count(Setting):
    """A whole number >= 0 of ``unit``; unset or blank reads as ``number``; anything else is a
    ``UsageError``."""

    __slots__ = ("example", "number", "unit")
    kind = "whole number"

    def __init__(self, name: str, *, default: int, unit: str, example: int, read_by: str,
                 doc: str) -> None:
        super().__init__(name, default=str(default), read_by=read_by, doc=doc)
        self.number, self.unit, self.example = default, unit, example

    def read(self, env: Mapping[str, str]) -> int:
        value = env.get(self.name)
        if value is None or not value.strip():
            return self.number
        try:
            number = int(value.strip())
        except ValueError:
            number = -1
        if number < 0:
            from kernelkit.errors import UsageError

            raise UsageError(f"{self.name}={value!r} is not a number of {self.unit}",
                             hint=f"set it to a whole number of {self.unit} "
                                  f"(e.g. {self.example}), or unset it")
        return number


class Names(Setting):
    """A comma-separated list; spaces around each name and empty names dropped."""

    __slots__ = ()
    kind = "comma list"

    def read(self, env: Mapping[str, str]) -> tuple[str, ...]:
        listed = (env.get(self.name) or "").split(",")
        return tuple(n.strip() for n in listed if n.strip())


#: ccache's remote storage backends (its documentation, "Remote storage backends")
CCACHE_REMOTE_SCHEMES = ("file:", "http:", "redis:", "rediss:", "crsh:")


class RemoteStorage(Setting):
    """ccache remote storage URLs separated by spaces, each of a backend ccache knows."""

    __slots__ = ()
    kind = "URLs (spaces)"

    def read(self, env: Mapping[str, str]) -> str | None:
        value = " ".join((env.get(self.name) or "").split())
        if not value:
            return None
        for entry in value.split(" "):
            if not entry.startswith(CCACHE_REMOTE_SCHEMES):
                from kernelkit.errors import UsageError

                raise UsageError(
                    f"{self.name}: {entry!r} is not a ccache remote storage",
                    hint="use file:/shared/dir, http://host/path or redis://host "
                         "(several separated by spaces), or unset it")
        return value


class Passed(Setting):
    """Read by a program kernelkit runs or writes (CMake, a generated script, git), or by the
    compile through the environment mapping kernelkit hands it; kernelkit parses none."""

    __slots__ = ()
    kind = "passed on"


# --- where things are kept ------------------------------------------------------------------
XDG_CACHE_HOME = PathSetting(
    "XDG_CACHE_HOME", default="`~/.cache`", read_by="`util/paths.py`",
    doc="the base of every default below (`<it>/kernelkit/...`)")
KERNELKIT_HUB_DIR = PathSetting(
    "KERNELKIT_HUB_DIR", default="`~/.cache/kernelkit/hub`", read_by="`util/paths.py`",
    doc="the directory hub used when `KERNELKIT_HUB` and `--hub` are unset")
KERNELKIT_CACHE = PathSetting(
    "KERNELKIT_CACHE", default="`~/.cache/kernelkit/kernels`", read_by="`util/paths.py`",
    doc="the loader's cache (and git remotes' mirrors)")
KERNELKIT_ENVS = PathSetting(
    "KERNELKIT_ENVS", default="`~/.cache/kernelkit/envs`", read_by="`util/paths.py`",
    doc="pinned build environments, one per variant")
KERNELKIT_CCACHE = Flag(
    "KERNELKIT_CCACHE", default=True, read_by="`util/paths.py`",
    doc="the compiler cache (ccache) in front of the compilers")
KERNELKIT_CCACHE_DIR = PathSetting(
    "KERNELKIT_CCACHE_DIR", default="`CCACHE_DIR`, else `~/.cache/kernelkit/ccache`",
    read_by="`util/paths.py`", doc="the compiler cache's directory")
CCACHE_DIR = PathSetting(
    "CCACHE_DIR", default="`~/.cache/kernelkit/ccache`", read_by="`util/paths.py`",
    doc="ccache's own variable, used when `KERNELKIT_CCACHE_DIR` is unset")
KERNELKIT_CCACHE_REMOTE = RemoteStorage(
    "KERNELKIT_CCACHE_REMOTE", default="none", read_by="`builder/caches/compiler_cache.py`",
    doc="ccache remote storage shared between machines (`file:`, `http:`, `redis:` ...); "
        "checked before any variant starts")
KERNELKIT_CONFIGURE_CACHE = PathOrOff(
    "KERNELKIT_CONFIGURE_CACHE", default="`~/.cache/kernelkit/configure`",
    read_by="`builder/caches/configure_cache.py`",
    doc="configured CMake trees and compiler identifications kept between builds")
KERNELKIT_PROBE_CACHE = PathOrOff(
    "KERNELKIT_PROBE_CACHE", default="`~/.cache/kernelkit/probe`",
    read_by="`builder/toolchain/probe.py`",
    doc="answers of the torch probe per unchanged interpreter")

# --- the hub --------------------------------------------------------------------------------
KERNELKIT_HUB = Text(
    "KERNELKIT_HUB", default="the directory hub", read_by="`hub/hubid.py`, `loader/settings.py`",
    doc="the hub: a directory, `git+URL`, or `hf`/`hf://<host>`")
HF_ENDPOINT = Text(
    "HF_ENDPOINT", default="`https://huggingface.co`", read_by="`hub/hubid.py`, `hub/hf.py`",
    doc="the Hugging Face Hub's address (or `kernelkit serve`'s), checked before use")
HF_TOKEN = Text(
    "HF_TOKEN", default="none", read_by="`hub/__init__.py`",
    doc="the Hugging Face Hub token (never logged)")
GIT_CONFIG_COUNT = Passed(
    "GIT_CONFIG_COUNT", default="0", read_by="`hub/git_remote.py`",
    doc="git's configuration from the environment; kernelkit's credential helper entries go "
        "after the user's")
KERNELKIT_GIT_USERNAME = Passed(
    "KERNELKIT_GIT_USERNAME", default="(set by kernelkit)", read_by="git's credential helper",
    doc="set by kernelkit for git only: a git remote's user name, kept off argv")
KERNELKIT_GIT_PASSWORD = Passed(
    "KERNELKIT_GIT_PASSWORD", default="(set by kernelkit)", read_by="git's credential helper",
    doc="set by kernelkit for git only: a git remote's password, kept off argv")

# --- the loader -----------------------------------------------------------------------------
KERNELKIT_OFFLINE = Flag(
    "KERNELKIT_OFFLINE", default=False, read_by="`loader/settings.py`",
    doc="answer from the cache only, never ask a hub")
HF_HUB_OFFLINE = Flag(
    "HF_HUB_OFFLINE", default=False, read_by="`loader/settings.py`",
    doc="the same, huggingface_hub's name for it")
KERNELKIT_TRUSTED_PUBLISHERS = Names(
    "KERNELKIT_TRUSTED_PUBLISHERS", default="`kernels-community`",
    read_by="`loader/settings.py`",
    doc="organisations trusted without `trust_remote_code=True`, added to the default")
LOCAL_KERNELS = Text(
    "LOCAL_KERNELS", default="none", read_by="`loader/settings.py`, `testing/run.py`",
    doc="`repo_id=path` pairs (`:`-separated) that `get_kernel` loads from disk instead")
KERNELKIT_PROGRESS = Flag(
    "KERNELKIT_PROGRESS", default=True, read_by="`loader/progress.py`",
    doc="download progress (a log record, or the CLI's bars)")
KERNELKIT_PROGRESS_MIN_BYTES = Count(
    "KERNELKIT_PROGRESS_MIN_BYTES", default=16 * 1024 * 1024, unit="bytes", example=16777216,
    read_by="`loader/progress.py`", doc="downloads smaller than this report no progress")

# --- signatures (docs/security.md, "Signed kernels") -----------------------------------------
XDG_CONFIG_HOME = PathSetting(
    "XDG_CONFIG_HOME", default="`~/.config`", read_by="`util/paths.py`",
    doc="the base of the trust policy's and the signing key's default paths "
        "(`<it>/kernelkit/...`)")
KERNELKIT_TRUST_POLICY = PathSetting(
    "KERNELKIT_TRUST_POLICY", default="`~/.config/kernelkit/trust.toml` when it exists",
    read_by="`loader/settings.py`",
    doc="the trust policy: who may publish per organisation, revoked keys (named but missing: "
        "an error)")
KERNELKIT_REQUIRE_SIGNED = Flag(
    "KERNELKIT_REQUIRE_SIGNED", default=False, read_by="`loader/settings.py`", strict=True,
    hint="set it to 1 to require signatures, 0 not to, or unset it",
    doc="every kernel loaded must carry a signature the trust policy accepts "
        "(`require_signature=` wins; another word is an error: a misspelt security switch is "
        "never silently off)")
KERNELKIT_SIGSTORE_TRUSTED_ROOT = PathSetting(
    "KERNELKIT_SIGSTORE_TRUSTED_ROOT", default="sigstore's public-good root",
    read_by="`loader/settings.py`",
    doc="a Sigstore trusted root JSON for verifying `metadata.json.sigstore` offline")
KERNELKIT_SIGNING_KEY = Text(
    "KERNELKIT_SIGNING_KEY", default="none", read_by="`cli/cmd_sign.py`",
    doc="a private signing key's PEM text (a CI secret) for `kernelkit sign`/`upload --sign` "
        "(never logged)")
# --- building a missing variant (issue 29) --------------------------------------------------
KERNELKIT_BUILD_MISSING = Flag(
    "KERNELKIT_BUILD_MISSING", default=False,
    read_by="`source_build/api.py`, `cli/cmd_info.py`, `cli/cmd_variants.py`",
    doc="when no published variant fits, build it here from the sources published with the "
        "commit (verified, checked, cached); `build_missing=`/`--build-missing` win")

# --- layers ---------------------------------------------------------------------------------
DISABLE_KERNEL_MAPPING = Flag(
    "DISABLE_KERNEL_MAPPING", default=False, read_by="`layers/kernelize.py`", strict=True,
    hint="set it to 1 to disable kernel mappings, 0 to enable them",
    doc="`kernelize` keeps every original forward (upstream's name; another word is an error)")

# --- the builder ----------------------------------------------------------------------------
KERNELKIT_CUDA_CAPABILITIES = Text(
    "KERNELKIT_CUDA_CAPABILITIES", default="the toolkit's list", strip=True,
    read_by="`builder/api.py` (parser: `generate/cuda_archs.py` `parse_capabilities`), "
            "`source_build/target.py`, generated `setup.py`",
    doc="CUDA capabilities to compile for (`8.0,9.0+PTX`) unless `--cuda-capabilities` is given")
CUDA_HOME = PathSetting(
    "CUDA_HOME", default="none", read_by="`builder/toolchain/toolkit.py`",
    doc="the CUDA toolkit tried first (set for compiles in a pinned environment's toolkit)")
CUDA_PATH = PathSetting(
    "CUDA_PATH", default="none", read_by="`builder/toolchain/toolkit.py`",
    doc="the CUDA toolkit tried next; then `nvcc` on `PATH`, then `/usr/local/cuda`")
PATH = Passed(
    "PATH", default="the process's", read_by="`builder/` (finding tools), compiles",
    doc="where cmake, ninja, the compilers, nvcc and ccache are looked up")
CC = Text(
    "CC", default="`cc`/`gcc`/`clang` on `PATH`", read_by="`builder/toolchain/build_tools.py`",
    doc="the C compiler (a command with arguments)")
CXX = Text(
    "CXX", default="`c++`/`g++`/`clang++` on `PATH`",
    read_by="`builder/toolchain/build_tools.py`", doc="the C++ compiler")
KERNELKIT_CUTLASS_X_Y_DIR = Passed(
    "KERNELKIT_CUTLASS_<X_Y>_DIR", default="none",
    read_by="`builder/toolchain/header_deps.py`, generated CMake",
    doc="a local CUTLASS root for the `cutlass_X_Y` dependency (no pinned wheel used)")
CUTLASS_SRC_DIR = Passed(
    "CUTLASS_SRC_DIR", default="none",
    read_by="`builder/toolchain/header_deps.py`, generated CMake",
    doc="upstream's name for a local CUTLASS root, for every CUTLASS id")
CCACHE_DEPEND = Passed(
    "CCACHE_DEPEND", default="`1` (set by kernelkit)", read_by="`builder/caches/compiler_cache.py`",
    doc="ccache's depend mode; kernelkit sets it unless it or `CCACHE_NODEPEND` is set")
CCACHE_NODEPEND = Passed(
    "CCACHE_NODEPEND", default="unset", read_by="`builder/caches/compiler_cache.py`",
    doc="set: kernelkit leaves ccache's depend mode off")
CCACHE_IGNOREOPTIONS = Passed(
    "CCACHE_IGNOREOPTIONS", default="none", read_by="`builder/caches/compiler_cache.py`",
    doc="kept, with nvcc's path maps added")

# --- scripts kernelkit writes, which read the environment themselves ----------------------
KERNELKIT_PROBE_IMPORT = Passed(
    "KERNELKIT_PROBE_IMPORT", default="unset", read_by="`generate/torch_info.py` (standalone)",
    doc="`1`: the torch probe imports torch instead of reading its files")
MAX_JOBS = Passed(
    "MAX_JOBS", default="the usable cores", read_by="generated `setup.py`",
    doc="parallel compile jobs of a dev build")
CMAKE_ARGS = Passed(
    "CMAKE_ARGS", default="none", read_by="generated `setup.py`",
    doc="extra CMake arguments of a dev build")
DEBUG = Passed(
    "DEBUG", default="unset", read_by="generated `setup.py`",
    doc="set: a dev build is a Debug build")

#: every declaration above, in order (the table in docs/design.md)
SETTINGS: tuple[Setting, ...] = tuple(v for v in dict(globals()).values()
                                      if isinstance(v, Setting))


def markdown_table() -> str:
    """The settings table of docs/design.md, from the declarations."""
    rows = ["| variable | default | parser | read by | what it does |", "|---|---|---|---|---|"]
    rows += [f"| `{s.name}` | {s.default} | {s.kind} | {s.read_by} | {s.doc} |"
             for s in SETTINGS]
    return "\n".join(rows) + "\n"
