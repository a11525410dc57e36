"""Version selection over refs: major branches, semver specifiers, revisions."""

from __future__ import annotations

import pytest

from kernelkit.errors import RevisionNotFoundError
from kernelkit.hub.port import Refs
from kernelkit.loader.versions import (
    VersionNotFoundError,
    VersionRequestError,
    describe_refs,
    parse_version_request,
    select_ref,
)

C = {n: (f"{n:02x}" * 20) for n in range(1, 14)}

REFS = Refs(
    branches={"main": C[1], "v1": C[2], "v2": C[3], "v10": C[4], "feature": C[5]},
    tags={
        "v1.0.0": C[6], "v1.1.0": C[7], "v1.2.3": C[8], "v1.10.0": C[9],
        "v2.0.0rc1": C[10], "v2.0.0": C[11], "nightly": C[12], "v3.0.0-rc.1": C[13],
    },
)


@pytest.mark.parametrize(
    ("spec", "tag"),
    [
        (">=1.1,<2", "v1.10.0"),  # numeric, not lexical: 1.10 > 1.2
        ("~=1.2", "v1.10.0"),
        ("~=1.2.0", "v1.2.3"),
        ("==1.2.*", "v1.2.3"),
        ("==1.0.0", "v1.0.0"),
        ("<2", "v1.10.0"),
        (">=1", "v2.0.0"),  # v3.0.0-rc.1 is a pre-release: not chosen unless asked
        (">=3.0.0rc1", "v3.0.0-rc.1"),  # the specifier names a pre-release
        ("==2.0.0rc1", "v2.0.0rc1"),
    ],
)
def test_specifier_picks_newest_matching_release(spec: str, tag: str) -> None:
    sel = select_ref(REFS, "acme/k", version=spec)
    assert sel.ref == tag
    assert sel.commit == REFS.tags[tag]


def test_specifier_without_match_lists_release_tags() -> None:
    with pytest.raises(VersionNotFoundError) as info:
        select_ref(REFS, "acme/k", version=">=4")
    msg = str(info.value)
    assert "'>=4'" in msg and "acme/k" in msg
    assert "v1.0.0, v1.1.0, v1.2.3, v1.10.0, v2.0.0rc1, v2.0.0" in msg
    assert "nightly" not in msg
    assert isinstance(info.value, ValueError)


def test_major_version_is_the_branch() -> None:
    sel = select_ref(REFS, "acme/k", version=2)
    assert (sel.ref, sel.commit, sel.newest_major) == ("v2", C[3], 10)
    assert select_ref(REFS, "acme/k", version=10).newest_major is None
    assert select_ref(REFS, "acme/k", version="10").ref == "v10"


def test_missing_major_uses_upstream_message() -> None:
    with pytest.raises(ValueError, match=r"^Version 0 not found, available versions: 1, 2, 10"):
        select_ref(REFS, "acme/k", version=0)


@pytest.mark.parametrize(
    ("revision", "commit"),
    [("main", C[1]), ("v1.2.3", C[8]), ("nightly", C[12]), (C[5], C[5]), (C[5][:7], C[5])],
)
def test_revision_branch_tag_commit_and_short_id(revision: str, commit: str) -> None:
    assert select_ref(REFS, "acme/k", revision=revision).commit == commit


def test_unknown_full_commit_passes_through_and_unknown_name_fails() -> None:
    sha = "ab" * 20
    assert select_ref(REFS, "acme/k", revision=sha).commit == sha
    with pytest.raises(RevisionNotFoundError, match="'nope' not found in acme/k; available: "
                       "feature, main, v1, v10, v2, nightly"):
        select_ref(REFS, "acme/k", revision="nope")


def test_ambiguous_short_commit_is_refused() -> None:
    refs = Refs(branches={"a": "abcd" + "0" * 36, "b": "abcd" + "1" * 36})
    with pytest.raises(RevisionNotFoundError):
        select_ref(refs, "acme/k", revision="abcd")


def test_request_errors_use_upstream_messages() -> None:
    with pytest.raises(ValueError, match=r"Only one of `revision` or `version` must be specified."):
        select_ref(REFS, "acme/k", revision="main", version=1)
    with pytest.raises(ValueError, match=r"^A kernel version or revision must be specified."):
        select_ref(REFS, "acme/k")
    with pytest.raises(VersionRequestError, match="neither a major version"):
        parse_version_request("latest please")
    with pytest.raises(VersionRequestError):
        parse_version_request(True)  # type: ignore[arg-type]


def test_describe_refs_orders_versions_numerically() -> None:
    rows = describe_refs(REFS)
    assert [r[1] for r in rows if r[0] == "version"] == ["v1", "v2", "v10"]
    releases = [r[1] for r in rows if r[0] == "release"]
    assert releases[:4] == ["v1.0.0", "v1.1.0", "v1.2.3", "v1.10.0"]
    assert ("branch", "main", C[1]) in rows and ("tag", "nightly", C[12]) in rows
