"""Fuzzing with hypothesis: every input kernelkit reads from a user or a hub gives a value or
one of kernelkit's own errors (the ``KernelkitError`` tree), never a traceback of another kind.

Targets: build.toml, metadata.json, kernels.lock, ``[tool.kernels]`` of pyproject.toml, repo
ids, revisions, version specifiers and variant names. ``CONFIG.fuzz_examples`` cases each.
"""

from __future__ import annotations

import contextlib
import json
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from kernelkit.artifact.metadata import Metadata  # noqa: E402
from kernelkit.errors import HubError, KernelkitError, VersionRequestError  # noqa: E402
from kernelkit.hub import names as hub_names  # noqa: E402
from kernelkit.hub.port import Refs  # noqa: E402
from kernelkit.loader import identity  # noqa: E402
from kernelkit.loader.cache import RepoCache  # noqa: E402
from kernelkit.loader.versions import parse_version_request, select_ref  # noqa: E402
from kernelkit.lock.lockfile import parse_locks  # noqa: E402
from kernelkit.lock.project import read_dependencies  # noqa: E402
from kernelkit.manifest.parse import parse_manifest  # noqa: E402
from kernelkit.variants.choose import rank_variants  # noqa: E402
from kernelkit.variants.host import System  # noqa: E402
from kernelkit.variants.name import parse_variant  # noqa: E402
from tests.reliability.common import CONFIG  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data"
FUZZ = settings(max_examples=CONFIG.fuzz_examples, deadline=None, database=None,
                suppress_health_check=list(HealthCheck))
CASES: dict[str, int] = {}

# --- strategies -------------------------------------------------------------------------------

NASTY = st.sampled_from(["", "\n", "\0", "..", "/", "\\", "{}", "{org}", "$", "v1\n", "💥",
                         "\udcff", "a" * 300, "1" * 5000, "--", "%2F", "-rf", "HEAD~1", ":x"])
TEXT = st.one_of(st.text(max_size=60), NASTY, st.from_regex(r"[a-z0-9./_+-]{0,40}",
                                                            fullmatch=True))
JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), TEXT),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(TEXT, inner, max_size=4)),
    max_leaves=12)


def toml_value(value: Any) -> str:
    """A TOML literal for ``value`` (strings JSON-quoted, which TOML's basic strings accept
    except for a few escapes; those become parse errors, which is also fine to fuzz)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value if v is not None) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()
                               if v is not None) + "}"
    return '""'


def only_kernelkit_errors(name: str, fn: Callable[[], object]) -> None:
    CASES[name] = CASES.get(name, 0) + 1
    try:
        fn()
    except KernelkitError as exc:
        message = str(exc).strip()
    else:
        return
    assert message, "an error without a message"


# --- build.toml -------------------------------------------------------------------------------

MANIFEST = (DATA / "projects" / "addone" / "build.toml").read_text()
KEYS = re.findall(r"^([a-z-]+) = ", MANIFEST, re.M)


@FUZZ
@given(st.text(max_size=400))
def test_build_toml_text(text: str) -> None:
    only_kernelkit_errors("build.toml", lambda: parse_manifest(text, Path("build.toml"),
                                                               check_sources=False))


@FUZZ
@given(st.integers(0, len(KEYS) - 1), JSON, st.booleans())
def test_build_toml_values(index: int, value: Any, nest: bool) -> None:
    key = KEYS[index]
    literal = toml_value(value)
    if nest:
        literal = "[" * 50 + literal + "]" * 50
    text = re.sub(rf"^{key} = .*$", lambda _: f"{key} = {literal}", MANIFEST, count=1,
                  flags=re.M)
    only_kernelkit_errors("build.toml", lambda: parse_manifest(text, Path("build.toml"),
                                                               check_sources=False))


# --- metadata.json ----------------------------------------------------------------------------

VALID_META = {"name": "demo", "id": "_demo_cpu_abc1234", "version": 1, "license": "MIT",
              "python-depends": [], "kernel-depends": [], "backend": {"type": "cpu"},
              "digest": {"algorithm": "sha256", "files": {}, "metadata": "x"},
              "provenance": {"kernel-builder": {"version": "1"}}}


@FUZZ
@given(JSON, st.sampled_from(sorted(VALID_META)), st.booleans())
def test_metadata_json(value: Any, key: str, whole: bool) -> None:
    data = value if whole else {**VALID_META, key: value}
    only_kernelkit_errors("metadata.json", lambda: Metadata.from_json(data))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "metadata.json"
        path.write_text(json.dumps(data))
        only_kernelkit_errors("metadata.json", lambda: Metadata.read(path))


@FUZZ
@given(st.binary(max_size=200))
def test_metadata_json_bytes(raw: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "metadata.json"
        path.write_bytes(raw)
        only_kernelkit_errors("metadata.json", lambda: Metadata.read(path))


# --- kernels.lock and [tool.kernels] ----------------------------------------------------------

VALID_LOCK = {"repo_id": "org/k", "sha": "a" * 40,
              "variants": {"torch-cpu": {"hash": "sha256-" + "0" * 64,
                                         "hash_type": "git_lfs_concat"}}}


@FUZZ
@given(JSON, st.sampled_from(sorted(VALID_LOCK)), st.booleans())
def test_kernels_lock(value: Any, key: str, whole: bool) -> None:
    data = value if whole else [{**VALID_LOCK, key: value}]
    only_kernelkit_errors("kernels.lock", lambda: parse_locks(json.dumps(data)))


VALID_UPSTREAM_LOCK = {"dependency": {"repo-id": "org/k", "version": 1},
                       "lock": {"commit": "a" * 40}}


@FUZZ
@given(JSON, st.sampled_from(["dependency", "lock", "repo-id", "version", "revision", "commit"]))
def test_kernels_lock_upstream_format(value: Any, key: str) -> None:
    entry: dict[str, Any] = json.loads(json.dumps(VALID_UPSTREAM_LOCK))
    if key in entry:
        entry[key] = value
    else:
        entry["lock" if key == "commit" else "dependency"][key] = value
    only_kernelkit_errors("kernels.lock", lambda: parse_locks(json.dumps([entry])))


@FUZZ
@given(JSON, st.sampled_from(["kernelkit-lock-hashes", "kernels", "commit", "variants"]))
def test_kernels_lock_hashes(value: Any, key: str) -> None:
    from kernelkit.lock.lockfile import parse_hashes

    data: dict[str, Any] = {"kernelkit-lock-hashes": 1, "kernels": {"org/k": {
        "commit": "a" * 40, "variants": VALID_LOCK["variants"]}}}
    if key in data:
        data[key] = value
    else:
        data["kernels"]["org/k"][key] = value
    only_kernelkit_errors("kernels.lock.hashes",
                          lambda: parse_hashes(json.dumps(data), "kernels.lock.hashes"))


@FUZZ
@given(st.text(max_size=200))
def test_kernels_lock_text(text: str) -> None:
    only_kernelkit_errors("kernels.lock", lambda: parse_locks(text))


@FUZZ
@given(st.dictionaries(TEXT, JSON, max_size=4), JSON, st.booleans())
def test_tool_kernels(deps: dict[str, Any], other: Any, broken_table: bool) -> None:
    body = "\n".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in deps.items()
                     if v is not None)
    text = (f"[tool]\nkernels = {toml_value(other)}\n" if broken_table
            else f"[tool.kernels.dependencies]\n{body}\n")
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "pyproject.toml").write_text(text, encoding="utf-8", errors="surrogatepass")
        only_kernelkit_errors("[tool.kernels]", lambda: read_dependencies(Path(tmp)))


# --- names ------------------------------------------------------------------------------------


@FUZZ
@given(st.one_of(TEXT, st.builds(lambda a, b: f"{a}/{b}", TEXT, TEXT)))
def test_repo_ids(repo_id: str) -> None:
    CASES["repo ids"] = CASES.get("repo ids", 0) + 1
    ok = identity.is_repo_id(repo_id)
    try:
        hub_names.check_repo_id(repo_id)
        hub_ok = True
    except HubError:
        hub_ok = False
    assert ok == hub_ok, repo_id  # the loader and the hub agree on what a repo id is
    if not ok:
        with pytest.raises(HubError):
            RepoCache.of(Path("/nonexistent-cache"), repo_id, "local:/h")
        return
    folder = RepoCache.of(Path("/c"), repo_id, "local:/h").root.name
    assert "/" not in folder and len(folder.encode()) < 255 and not folder.startswith(".")


@FUZZ
@given(st.one_of(TEXT, st.from_regex(r"[0-9a-f]{4,64}", fullmatch=True)))
def test_revisions(revision: str) -> None:
    CASES["revisions"] = CASES.get("revisions", 0) + 1
    try:
        identity.check_revision(revision)
    except VersionRequestError:
        return
    name = identity.ref_file_name(revision)
    assert identity.ref_from_file_name(name) == revision  # reversible: injective
    assert "/" not in name and name not in (".", "..") and not name.startswith(".")
    assert len(name.encode()) < 255
    refs = Refs(branches={"v1": "a" * 40}, tags={"v1.0.0": "b" * 40})
    only_kernelkit_errors("revisions", lambda: select_ref(refs, "org/k", revision=revision))


@FUZZ
@given(st.one_of(TEXT, st.integers(), st.from_regex(r"(~=|==|>=|<|!=)?[0-9.*a-z]{0,12}",
                                                    fullmatch=True)))
def test_version_specifiers(version: Any) -> None:
    refs = Refs(branches={"v1": "a" * 40, "v2": "b" * 40},
                tags={"v1.2.0": "c" * 40, "v2.0.0rc1": "d" * 40})
    only_kernelkit_errors("version specifiers", lambda: parse_version_request(version))
    only_kernelkit_errors("version specifiers", lambda: select_ref(refs, "org/k", version=version))


@FUZZ
@given(st.lists(st.one_of(TEXT, st.from_regex(
    r"torch[0-9]{2,3}-(cxx11|cxx98)-(cpu|cu[0-9]{3}|rocm[0-9]{2,3})-(x86_64|aarch64)-"
    r"(linux|darwin)", fullmatch=True)), max_size=6))
def test_variant_names(names: list[str]) -> None:
    CASES["variant names"] = CASES.get("variant names", 0) + 1
    for name in names:
        # ValueError is parse_variant's documented contract; callers turn it into a rejection.
        with contextlib.suppress(ValueError):
            parse_variant(name)
    system = System(torch_version=(2, 13), cxx11_abi=True, backend="cpu", backend_version=None,
                    cpu="x86_64", os="linux")
    decisions = rank_variants(names, system)
    assert {d.variant for d in decisions} == set(names)


def test_zz_report_fuzz_cases() -> None:
    """Print how many cases each target ran (run with -s to see it)."""
    print(f"\nfuzz cases: {CASES} total {sum(CASES.values())}")
