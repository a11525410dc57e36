"""Fuzzing two hub rules of issue 24 with hypothesis (``CONFIG.fuzz_examples`` cases each).

* Trees (item 6): whatever set of paths a commit is given, the tree written into a real git
  repository holds exactly those files, or the commit is refused with ``TreeClashError``
  naming a path that is both a file and a directory: never a silently dropped file.
* URL credentials (item 7): whatever user name and password a URL carries, ``redact_url``
  shows neither password nor an http(s) token user name, and ``split_credentials`` leaves no
  secret in the URL it returns, and gives back what was in it.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from urllib.parse import quote

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import (  # noqa: E402
    HealthCheck,
    given,
    settings,
    strategies as st,
)

from kernelkit.errors import TreeClashError  # noqa: E402
from kernelkit.hub.gitrepo import GitRepo  # noqa: E402
from kernelkit.util.urls import redact_url, split_credentials  # noqa: E402
from tests.reliability.common import CONFIG  # noqa: E402

FUZZ = settings(max_examples=max(20, CONFIG.fuzz_examples // 4), deadline=None,
                database=None, suppress_health_check=list(HealthCheck))
PART = st.sampled_from(["a", "b", "q", "r", "build", "x.py", "build.py", "a-b", "ab"])
PATH = st.lists(PART, min_size=1, max_size=3).map("/".join)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> GitRepo:
    git = GitRepo(tmp_path_factory.mktemp("fuzz-trees") / "t.git")
    git.init()
    return git


def clash(paths: set[str]) -> bool:
    return any(q.startswith(p + "/") for p in paths for q in paths)


@FUZZ
@given(st.lists(PATH, min_size=1, max_size=6, unique=True), st.lists(PATH, max_size=6,
                                                                     unique=True))
def test_a_tree_holds_exactly_its_files_or_names_the_clash(repo: GitRepo, first: list[str],
                                                           second: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        blob = Path(tmp) / "f"
        blob.write_text("x")
        if clash(set(first)):
            with pytest.raises(TreeClashError) as err:
                repo.next_tree(None, dict.fromkeys(first, blob), lambda p: False)
            assert err.value.under.startswith(err.value.path + "/")
            assert {err.value.path, err.value.under} <= set(first)
            return
        tree = repo.next_tree(None, dict.fromkeys(first, blob), lambda p: False)
        parent = repo.commit_tree(tree, None, "first")
        assert sorted(e.path for e in repo.ls_tree(parent)) == sorted(first)
        both = set(first) | set(second)
        if clash(both):  # the new files against the ones kept
            with pytest.raises(TreeClashError) as err:
                repo.next_tree(parent, dict.fromkeys(second, blob), lambda p: False)
            assert {err.value.path, err.value.under} <= both
            return
        tree = repo.next_tree(parent, dict.fromkeys(second, blob), lambda p: False)
        head = repo.commit_tree(tree, parent, "second")
        assert sorted(e.path for e in repo.ls_tree(head)) == sorted(both)


SECRET = st.text(st.characters(min_codepoint=33, max_codepoint=0x2FF), min_size=6,
                 max_size=20).map(lambda s: "S3" + s)
SCHEME = st.sampled_from(["https://", "http://", "git+https://", "ssh://", "git://"])


@FUZZ
@given(SCHEME, st.from_regex(r"[a-z][a-z0-9_.-]{0,10}", fullmatch=True), SECRET,
       st.booleans())
def test_credentials_never_survive_redaction(scheme: str, user: str, secret: str,
                                             token_only: bool) -> None:
    quoted = quote(secret, safe="")
    info = quoted if token_only else f"{user}:{quoted}"
    url = f"{scheme}{info}@host.example:8443/kernels/{{org}}/{{name}}.git"
    shown = redact_url(f"failed: {url} (exit 128)")
    clean, got_user, got_password = split_credentials(url.removeprefix("git+"))
    if token_only and scheme.startswith(("ssh", "git://")):
        assert shown == f"failed: {url} (exit 128)"  # an ssh login name is not a secret
        return
    assert quoted not in shown and quoted not in clean, (shown, clean)
    assert "***@host.example" in shown
    if token_only:
        assert got_user == secret and got_password is None
    else:
        assert got_password == secret
        assert got_user == (user if scheme.endswith("http://") or "https" in scheme else None)
