"""Fuzzing with hypothesis: every input kernelkit reads from a user or a hub gives a value or
one of kernelkit's own errors (the ``KernelkitError`` tree), never a traceback of another kind.

Targets: build.toml, metadata.json, kernels.lock, ``[tool.kernels]`` of pyproject.toml,
kernel-status.toml, signature inputs (``.kksig`` files, sigstore bundles, trust policies:
wrong types, truncated, huge), repo ids, revisions, version specifiers and variant names
(``CONFIG.fuzz_examples`` cases each); numbers beyond Python's int-string digit limit in every
TOML/JSON target (``Huge``); and manifest values that reach generated files: ``cmake_quote``
through real ``cmake -P``, ``python_literal`` through ``ast``, ``toml_string`` through
``tomllib``, and whole build.toml files through check-config into the generated CMake,
setup.py, _ops.py and pyproject.toml (values arrive intact, or are refused by their grammar).
"""

from __future__ import annotations

import ast
import contextlib
import json
import re
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import (  # noqa: E402
    HealthCheck,
    given,
    settings,
    strategies as st,
)

from kernelkit.artifact.metadata import Metadata  # noqa: E402
from kernelkit.errors import (  # noqa: E402
    HubError,
    KernelkitError,
    ManifestError,
    UnsafeValueError,
    VersionRequestError,
)
from kernelkit.generate import project_files  # noqa: E402
from kernelkit.generate.tvm_ffi_files import render_tvm_ffi_cmakelists  # noqa: E402
from kernelkit.hub import names as hub_names  # noqa: E402
from kernelkit.hub.port import Refs  # noqa: E402
from kernelkit.loader import identity  # noqa: E402
from kernelkit.loader.cache import RepoCache  # noqa: E402
from kernelkit.loader.status import parse_status  # noqa: E402
from kernelkit.loader.versions import parse_version_request, select_ref  # noqa: E402
from kernelkit.lock.lockfile import parse_locks  # noqa: E402
from kernelkit.lock.project import read_dependencies  # noqa: E402
from kernelkit.manifest.parse import parse_manifest  # noqa: E402
from kernelkit.manifest.validate import unsafe_path  # noqa: E402
from kernelkit.util.quote import (  # noqa: E402
    cmake_quote,
    cmake_refusal,
    is_kernel_name,
    python_literal,
    toml_string,
)
from kernelkit.variants.choose import rank_variants  # noqa: E402
from kernelkit.variants.host import System  # noqa: E402
from kernelkit.variants.name import parse_variant  # noqa: E402
from tests.cmake_script import record_calls  # noqa: E402
from tests.reliability.common import CONFIG, counter  # noqa: E402

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DATA = Path(__file__).resolve().parents[1] / "data"
FUZZ = settings(max_examples=CONFIG.fuzz_examples, deadline=None, database=None,
                suppress_health_check=list(HealthCheck))
CASES = counter("fuzz cases")

# --- strategies -------------------------------------------------------------------------------

NASTY = st.sampled_from(["", "\n", "\0", "..", "/", "\\", "{}", "{org}", "$", "v1\n", "💥",
                         "\udcff", "a" * 300, "1" * 5000, "--", "%2F", "-rf", "HEAD~1", ":x"])
TEXT = st.one_of(st.text(max_size=60), NASTY, st.from_regex(r"[a-z0-9./_+-]{0,40}",
                                                            fullmatch=True))


class Huge(str):
    """A number beyond Python's int-string digit limit (4300), written as raw digits into the
    TOML or JSON text (``toml_value``, ``json_text``): json and tomllib raise a bare ValueError
    on it, which every reader must turn into its own error."""


HUGE = st.integers(4301, 4400).map(lambda n: Huge("9" * n))
JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), TEXT, HUGE),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(TEXT, inner, max_size=4)),
    max_leaves=12)


def toml_value(value: Any) -> str:
    """A TOML literal for ``value`` (strings JSON-quoted, which TOML's basic strings accept
    except for a few escapes; those become parse errors, which is also fine to fuzz)."""
    if isinstance(value, Huge):
        return str.__str__(value)
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


def json_text(value: Any) -> str:
    """``json.dumps``, with every ``Huge`` written as a bare number."""
    return re.sub(r'"(9{4301,})"', r"\1", json.dumps(value))


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
        path.write_text(json_text(data))
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
    only_kernelkit_errors("kernels.lock", lambda: parse_locks(json_text(data)))


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
@given(JSON, st.sampled_from(["kernelkit-lock-hashes", "kernels", "commit", "variants",
                              "signer"]))
def test_kernels_lock_hashes(value: Any, key: str) -> None:
    from kernelkit.lock.lockfile import parse_hashes

    data: dict[str, Any] = {"kernelkit-lock-hashes": 1, "kernels": {"org/k": {
        "commit": "a" * 40, "variants": json.loads(json.dumps(VALID_LOCK["variants"]))}}}
    if key in data:
        data[key] = value
    elif key == "signer":  # the signer identity of a locked variant
        data["kernels"]["org/k"]["variants"]["torch-cpu"]["signer"] = value
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


# --- signatures: .kksig files, sigstore bundles, trust policies ----------------------------------

SIGNED_META = b'{"name": "demo", "id": "_demo_cpu_abc1234", "version": 1}'


@pytest.fixture(scope="module")
def signed() -> dict[str, Any]:
    """A real key, its valid signature file over ``SIGNED_META``, and a policy trusting it."""
    pytest.importorskip("cryptography")
    from kernelkit.signing.keys import generate_key
    from kernelkit.signing.sign import sign_variant

    tmp = Path(tempfile.mkdtemp(prefix="kk-fuzz-sign-"))
    key = generate_key(tmp / "key.pem")
    vdir = tmp / "build" / "torch-cpu"
    vdir.mkdir(parents=True)
    from kernelkit.artifact.layout import seal_variant

    (vdir / "__init__.py").write_text("")
    meta = seal_variant(vdir, Metadata(name="demo", id="_demo_cpu_abc1234", version=1,
                                       license="MIT", backend="cpu"))
    raw = sign_variant(vdir, key).path.read_bytes()
    return {"key": key, "sigfile": raw, "metadata": (vdir / "metadata.json").read_bytes(),
            "meta": meta}


def _sigfile_variant(raw: bytes, data: Any, how: str, value: Any, cut: int, pad: int) -> bytes:
    """A valid signature file made wrong: a field of another type or value, truncated, or
    padded past the size limit (``huge``)."""
    if how == "field":
        mutated = json.loads(raw)
        key = ["kernelkit-signature", "metadata-sha256", "signatures", "key", "signature"][
            cut % 5]
        if key in ("key", "signature"):
            mutated["signatures"][0][key] = value
        else:
            mutated[key] = value
        return json_text(mutated).encode()
    if how == "truncated":
        return raw[:cut % max(len(raw), 1)]
    if how == "huge":
        return raw[:-2] + b" " * (pad + (1 << 20)) + raw[-2:]
    return json_text(data).encode()


@FUZZ
@given(JSON, st.sampled_from(["field", "truncated", "huge", "whole"]), JSON,
       st.integers(0, 4000), st.integers(0, 1 << 16))
def test_signature_files(signed: dict[str, Any], data: Any, how: str, value: Any, cut: int,
                         pad: int) -> None:
    from kernelkit.errors import SignatureError
    from kernelkit.signing.policy import judge, parse_policy
    from kernelkit.signing.verify import collect

    CASES["signature file"] = CASES.get("signature file", 0) + 1
    raw = _sigfile_variant(signed["sigfile"], data, how, value, cut, pad)
    signers = collect(signed["metadata"], sigfile_raw=raw, bundle_raw=None)
    fp = signed["key"].fingerprint
    assert set(signers.identities) <= {fp}
    if raw != signed["sigfile"] and signers.valid:  # only a no-op change can still verify
        assert json.loads(raw)["signatures"][0] == json.loads(signed["sigfile"])["signatures"][0]
    policy = parse_policy({"orgs": {"org": {"keys": [fp]}}}, "policy")
    if signers.valid:
        assert judge(policy, signers, repo_id="org/k", variant="torch-cpu").signer == fp
    else:
        with pytest.raises(SignatureError) as err:
            judge(policy, signers, repo_id="org/k", variant="torch-cpu")
        assert err.value.message.startswith("kernel org/k variant torch-cpu: ")
        assert "\n" not in err.value.message and fp in err.value.message


@FUZZ
@given(st.binary(max_size=300), st.binary(max_size=300))
def test_signature_bytes(signed: dict[str, Any], sigfile: bytes, bundle: bytes) -> None:
    from kernelkit.signing.verify import collect

    CASES["signature file"] = CASES.get("signature file", 0) + 1
    signers = collect(signed["metadata"], sigfile_raw=sigfile,
                      bundle_raw=bundle if importable("sigstore") else None)
    assert not signers.valid


def importable(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


@FUZZ
@given(JSON, st.sampled_from(["require-signature", "revoked", "orgs", "keys", "sigstore",
                              "repository", "workflows", "issuer", "whole"]))
def test_trust_policy(value: Any, key: str) -> None:
    from kernelkit.signing.policy import parse_policy

    flow = "https://github.com/o/r/.github/workflows/b.yaml@refs/heads/main"
    data: dict[str, Any] = {"orgs": {"o": {"keys": ["ed25519:SHA256:" + "A" * 43],
                                           "sigstore": [{"repository": "o/r",
                                                         "workflows": [flow]}]}}}
    if key == "whole":
        data = value
    elif key in ("require-signature", "revoked", "orgs"):
        data[key] = value
    elif key in ("keys", "sigstore"):
        data["orgs"]["o"][key] = value
    else:
        data["orgs"]["o"]["sigstore"][0][key] = value
    only_kernelkit_errors("trust policy", lambda: parse_policy(data, "trust.toml"))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "trust.toml"
        path.write_text(toml_value(data)[1:-1].replace(", ", "\n") if isinstance(data, dict)
                        else toml_value(data))
        from kernelkit.signing.policy import read_policy

        only_kernelkit_errors("trust policy", lambda: read_policy(path))


@pytest.fixture(scope="module")
def bundle(signed: dict[str, Any]) -> dict[str, Any]:
    pytest.importorskip("sigstore")
    pytest.importorskip("rfc8785")
    from tests.sigstore_local import LocalSigstore

    local = LocalSigstore()
    root = Path(tempfile.mkdtemp(prefix="kk-fuzz-root-")) / "trusted_root.json"
    local.write_trusted_root(root)
    return {"raw": local.sign(signed["metadata"]), "root": root}


@FUZZ
@given(st.sampled_from(["mediaType", "verificationMaterial", "certificate", "tlogEntries",
                        "messageSignature", "signature", "truncated", "huge"]), JSON,
       st.integers(0, 100000))
def test_sigstore_bundles(signed: dict[str, Any], bundle: dict[str, Any], key: str, value: Any,
                          cut: int) -> None:
    from kernelkit.signing.verify import collect

    CASES["sigstore bundle"] = CASES.get("sigstore bundle", 0) + 1
    raw: bytes = bundle["raw"]
    if key == "truncated":
        mutated = raw[:cut % len(raw)]
    elif key == "huge":
        mutated = raw[:-1] + b" " * (1 << 20) + raw[-1:]
    else:
        data = json.loads(raw)
        holder = (data["verificationMaterial"] if key in ("certificate", "tlogEntries")
                  else data["messageSignature"] if key == "signature" else data)
        holder[key] = value
        mutated = json_text(data).encode()
    signers = collect(signed["metadata"], sigfile_raw=None, bundle_raw=mutated,
                      trusted_root=bundle["root"])
    assert not signers.valid or mutated == raw
    assert collect(signed["metadata"], sigfile_raw=None, bundle_raw=raw,
                   trusted_root=bundle["root"]).valid


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
    assert identity.ref_from_file_name(name) in (revision, None)  # None: the hashed long form
    assert "/" not in name and name not in (".", "..") and not name.startswith(".")
    assert len(name.encode()) <= identity.MAX_REF_FILE
    refs = Refs(branches={"v1": "a" * 40}, tags={"v1.0.0": "b" * 40})
    only_kernelkit_errors("revisions", lambda: select_ref(refs, "org/k", revision=revision))


# valid ref names up to the 200-character limit, rich in characters that percent-quote to 3
# bytes ('+', '/'): issue 24's long tag quoted past 255 bytes and broke every load
_PART = r"[A-Za-z0-9_][A-Za-z0-9_+-]{0,60}"
LONG_REFS = st.from_regex(rf"{_PART}(/{_PART}){{0,3}}", fullmatch=True)
ANY_REF = st.one_of(LONG_REFS, st.text(max_size=300), NASTY,
                    st.builds(lambda a, n: a + "+" * n, LONG_REFS, st.integers(0, 200)))


@FUZZ
@given(ANY_REF, ANY_REF)
def test_ref_file_names_are_bounded_and_injective(a: str, b: str) -> None:
    """Any two refs (valid or not) get different file names, each a safe, bounded name."""
    CASES["ref file names"] = CASES.get("ref file names", 0) + 1
    names = {ref: identity.ref_file_name(ref) for ref in (a, b)}
    for ref, name in names.items():
        assert 0 < len(name.encode()) <= identity.MAX_REF_FILE, (ref, name)
        assert "/" not in name and "\0" not in name and not name.startswith(".")
        assert identity.ref_from_file_name(name) in (ref, None)
    assert (names[a] == names[b]) == (a == b), (a, b)


@FUZZ
@given(st.dictionaries(ANY_REF, st.sampled_from(["a" * 40, "b" * 40, "not a commit"]),
                       max_size=8), ANY_REF)
def test_recorded_refs(listing: dict[str, str], resolved: str) -> None:
    """A hub's listing and a name resolved by name, whatever they hold, are recorded without
    an error of another kind, and read back as exactly their valid part."""
    from kernelkit.loader.offline import cached_refs, record_refs

    CASES["recorded refs"] = CASES.get("recorded refs", 0) + 1
    with tempfile.TemporaryDirectory() as tmp:
        rc = RepoCache.of(Path(tmp), "org/k", "local:/h")
        (rc.root / ("a" * 40)).mkdir(parents=True)
        only_kernelkit_errors("recorded refs", lambda: record_refs(
            rc, Refs(branches=listing, tags=listing)))
        valid = {r: c for r, c in listing.items()
                 if identity.is_revision(r) and c == "a" * 40}
        assert cached_refs(rc) == Refs(branches=valid, tags=valid)
        rc.write_ref("resolved", resolved, "a" * 40)
        expected = {resolved: "a" * 40} if identity.is_revision(resolved) else {}
        assert rc.refs("resolved") == expected


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


# --- kernel-status.toml -----------------------------------------------------------------------


@FUZZ
@given(st.dictionaries(st.sampled_from(["kind", "destination", "revision", "x"]), JSON,
                       max_size=4), st.booleans())
def test_kernel_status_toml(table: dict[str, Any], redirect: bool) -> None:
    if redirect:
        table = {"kind": "redirect", **table}
    text = "\n".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in table.items()
                     if v is not None)
    only_kernelkit_errors("kernel-status.toml", lambda: parse_status(text, "kernel-status.toml"))


# --- manifest values that reach generated files (CMake, setup.py, pyproject.toml, _ops.py) ----

INJECT = st.sampled_from([
    '")\nexecute_process(COMMAND touch pwned)\n#', ")\nfile(WRITE pwned x)\n", "${CMAKE_COMMAND}",
    "$ENV{HOME}", "$CACHE{X}", "\\", '"', "'", "#", "[[", "]]", "[=[", "(", ")", "@PWNED@",
    "$(touch pwned)", "`touch pwned`", ";", "$<1:x>", "$<", ">", ",", " ", "\t", "\n", "\r",
    "\x00", "\x7f", "\u2028", "\udcff", "é", "💥", "{", "}", "%", "\\n", '\\"', "${", "$",
    "-DX=a>b", "SHELL:", "..", "/", "a", "relu", "-O2"])
VALUE = st.lists(st.one_of(INJECT, st.text(max_size=4)), max_size=5).map("".join)
NAME = st.one_of(VALUE, st.from_regex(r"[A-Za-z_][A-Za-z0-9_.-]{0,8}", fullmatch=True))
# Dangerous if not escaped, yet allowed by every grammar: these must reach CMake intact.
_SYNTAX = [")", "execute_process(COMMAND touch pwned)", "#", "[[", "]]", "(", "@PWNED@", "{",
           "}", "%", "é", "💥", " ", "'", "=", "+", "-O2", "k.cpp", "a/", "[=[", "else()"]
ALLOWED_PATH = st.lists(st.sampled_from(_SYNTAX), min_size=1, max_size=5).map("".join)
ALLOWED_FLAG = st.lists(st.sampled_from([
    *_SYNTAX, '")', '"', "${CMAKE_COMMAND}", "$ENV{HOME}", "$CACHE{X}", "\\", "$(touch pwned)",
    "`touch pwned`", "${", "$", ">", ",", "-DX=a>b"]), min_size=1, max_size=5).map("".join)


@FUZZ
@given(st.lists(VALUE, min_size=1, max_size=8))
def test_cmake_quote_round_trips_or_refuses(values: list[str]) -> None:
    """Real ``cmake -P``: every value cmake_quote accepts arrives as exactly one argument,
    every other value is refused; nothing runs."""
    CASES["cmake_quote"] = CASES.get("cmake_quote", 0) + 1
    kept = []
    for value in values:
        if cmake_refusal(value) is not None:
            with pytest.raises(UnsafeValueError):
                cmake_quote(value)
        else:
            kept.append(value)
    with tempfile.TemporaryDirectory() as tmp:
        text = "kk_add_sources(" + " ".join(cmake_quote(v) for v in kept) + ")\n"
        assert record_calls(text, Path(tmp)) == [("kk_add_sources", kept)]
        assert not (Path(tmp) / "pwned").exists()


@FUZZ
@given(st.recursive(st.one_of(st.none(), st.booleans(), st.integers(-10**50, 10**50), VALUE),
                    lambda inner: st.one_of(st.lists(inner, max_size=3),
                                            st.lists(inner, max_size=3).map(tuple),
                                            st.dictionaries(VALUE, inner, max_size=3)),
                    max_leaves=8))
def test_python_literal_round_trips(value: Any) -> None:
    CASES["python_literal"] = CASES.get("python_literal", 0) + 1
    text = python_literal(value)
    tree = ast.parse(text, mode="eval")  # one expression, nothing else
    assert ast.literal_eval(tree) == value


@FUZZ
@given(VALUE)
def test_toml_string_round_trips_or_refuses(value: str) -> None:
    CASES["toml_string"] = CASES.get("toml_string", 0) + 1
    if any(0xD800 <= ord(ch) <= 0xDFFF for ch in value):
        with pytest.raises(UnsafeValueError):
            toml_string(value)
        return
    assert tomllib.loads(f"x = {toml_string(value)}\ny = 1\n") == {"x": value, "y": 1}


def _fuzz_manifest(kind: str, names: tuple[str, str], src: list[str], flags: list[str],
                   pyext: list[str], general: str = "fz") -> str:
    q = toml_string
    arr = lambda items: "[" + ", ".join(q(i) for i in items) + "]"  # noqa: E731
    cpu, cuda = names
    return (f'[general]\nname = "{general}"\nversion = 1\nedition = 5\nlicense = "MIT"\n'
            f'backends = ["cpu", "cuda"]\n\n[{kind}]\nsrc = {arr(src)}\n'
            f"include = {arr(src[:1])}\ncxx-flags = {arr(flags)}\npyext = {arr(pyext)}\n\n"
            f'[kernel.{q(cpu)}]\nbackend = "cpu"\ndepends = ["torch"]\nsrc = {arr(src)}\n'
            f"cxx-flags = {arr(flags[::-1])}\n\n"
            f'[kernel.{q(cuda)}]\nbackend = "cuda"\ndepends = ["torch"]\nsrc = {arr(src)}\n'
            f'cuda-flags = {arr(flags)}\ncuda-capabilities = ["8.0", "9.0a"]\n')


def _groups(*pairs: tuple[str, list[str]]) -> list[str]:
    return [x for key, items in pairs if items for x in (key, *items)]


def _refused(names: tuple[str, str], src: list[str], flags: list[str],
             pyext: list[str]) -> bool:
    """What the grammars (kernelkit.util.quote, manifest.validate) refuse."""
    return (not all(is_kernel_name(n) for n in names)
            or any(unsafe_path(p) is not None for p in src)
            or any(not f or cmake_refusal(f) is not None for f in flags)
            or any(re.fullmatch(r"[A-Za-z0-9_]{1,32}", e) is None for e in pyext))


@st.composite
def manifest_values(draw: Any, name: Any, path: Any, flag: Any, ext: Any) -> tuple[Any, ...]:
    """``(names, src, flags, pyext)`` drawn from the given strategies."""
    return (draw(st.tuples(name, name)), draw(st.lists(path, min_size=1, max_size=3)),
            draw(st.lists(flag, max_size=3)),
            draw(st.lists(st.one_of(ext, st.just("json")), max_size=2)))


VALID_NAME = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.-]{0,8}", fullmatch=True)


@FUZZ
@given(st.sampled_from(["torch", "tvm-ffi"]), st.sampled_from(["fz", "class", "a-b9"]), st.one_of(
    manifest_values(NAME, VALUE, VALUE, VALUE),  # anything: refused exactly by the grammars
    # allowed names, paths and flags full of CMake and shell syntax: they must arrive intact
    manifest_values(VALID_NAME, ALLOWED_PATH, ALLOWED_FLAG, st.just("py"))))
def test_manifest_values_reach_generated_files_intact(kind: str, general: str,
                                                      values: tuple[Any, ...]) -> None:
    """build.toml -> check-config -> generated files: a value is refused exactly when its
    grammar refuses it; an accepted one reaches real CMake as exactly one argument, and
    setup.py, _ops.py and pyproject.toml parse back to the manifest's values."""
    CASES["generated files"] = CASES.get("generated files", 0) + 1
    names, src, flags, pyext = values
    if names[0] == names[1] or any(0xD800 <= ord(c) <= 0xDFFF
                                   for v in (*names, *src, *flags, *pyext) for c in v):
        return  # a TOML duplicate key, or text no UTF-8 file can hold
    text = _fuzz_manifest(kind, names, src, flags, pyext, general)
    try:
        manifest = parse_manifest(text, Path("build.toml"), check_sources=False)
    except ManifestError:
        assert _refused(names, src, flags, pyext), text
        return
    assert not _refused(names, src, flags, pyext), text
    cpu, cuda = names
    with tempfile.TemporaryDirectory() as tmp:
        if kind == "torch":
            files = project_files(manifest, "abc1234")
            expected = [("kk_setup", []),
                        ("kk_add_sources", ["torch", *_groups(("SOURCES", src),
                                                              ("INCLUDES", src[:1]),
                                                              ("CXX_FLAGS", flags))])]
            comps = {cpu: ("kk_cpu_component", [cpu, *_groups(("SOURCES", src),
                                                              ("CXX_FLAGS", flags[::-1]))]),
                     cuda: ("kk_cuda_component", [cuda, *_groups(("SOURCES", src),
                                                                ("CUDA_FLAGS", flags))])}
            expected += [comps[n] for n in sorted(comps)] + [("kk_add_extension", [])]
            assert record_calls(files["CMakeLists.txt"], Path(tmp)) == expected
            _check_python_files(files, cuda, general.replace("-", "_"))
        else:
            _check_tvm_ffi(render_tvm_ffi_cmakelists(manifest, "abc1234"), Path(tmp), names,
                           src, flags)
        assert not (Path(tmp) / "pwned").exists()


def _check_python_files(files: dict[str, str], cuda: str, py: str) -> None:
    setup = ast.parse(files["setup.py"])
    consts = {t.id: ast.literal_eval(node.value) for node in setup.body
              if isinstance(node, ast.Assign) for t in node.targets
              if isinstance(t, ast.Name) and t.id in ("CUDA_COMPONENTS", "PYTHON_NAME")}
    assert consts == {"CUDA_COMPONENTS": {cuda: ["8.0", "9.0a"]}, "PYTHON_NAME": py}
    ast.parse(files[f"torch-ext/{py}/_ops.py"])
    assert tomllib.loads(files["pyproject.toml"])["project"]["name"] == py


def _check_tvm_ffi(text: str, tmp: Path, names: tuple[str, str], src: list[str],
                   flags: list[str]) -> None:
    """The manifest part of a tvm-ffi CMakeLists.txt (between its fixed header, which needs a
    compiler, and the extension), once per backend."""
    body = text.split('set(KK_SOURCES "")\n', 1)[1].split("# The extension:", 1)[0]
    binding = ("kk_sources", _groups(("SOURCES", src), ("INCLUDES", src[:1]),
                                     ("CXX_FLAGS", flags)))
    cuda = names[1]
    on_cpu = ("kk_sources", _groups(("SOURCES", src), ("CXX_FLAGS", flags[::-1])))
    assert record_calls(body, tmp / "cpu", "KK_BACKEND=cpu") == [binding, on_cpu]
    on_cuda = ("kk_sources", [*_groups(("SOURCES", src), ("CUDA_FLAGS", flags)),
                              "CUDA_ARCHS", "8.0"])
    assert record_calls(body, tmp / "cuda", "KK_BACKEND=cuda",
                        f"KK_CUDA_ARCHS_{cuda}=8.0") == [binding, on_cuda]

