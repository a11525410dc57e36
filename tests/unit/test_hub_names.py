"""Hub naming rules, release-tag rules, card rendering and hub spec dispatch (pure logic)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelkit.errors import HubError
from kernelkit.hub import open_hub
from kernelkit.hub.git_remote import GitRemoteHub
from kernelkit.hub.local import LocalGitHub
from kernelkit.hub.names import (
    check_repo_id,
    check_repo_path,
    is_hex_prefix,
    is_ref_name,
    under_prefixes,
)
from kernelkit.publish.upload import check_tag, render_card


def test_repo_ids() -> None:
    assert check_repo_id("kernels-community/relu") == ("kernels-community", "relu")
    for bad in ("relu", "a/b/c", "../x", "org/..", "-org/x", "org/x.git", "org/", "org/a b"):
        with pytest.raises(HubError, match="invalid repository id"):
            check_repo_id(bad)


def test_ref_names_reject_revision_expressions() -> None:
    assert is_ref_name("v1") and is_ref_name("v1.2.0") and is_ref_name("feature/x")
    for bad in ("", "HEAD~1", "v1^", "main:README.md", "--upload-pack=x", "a..b", "x.lock",
                "a//b", "@{-1}", "v1 ", ".hidden"):
        assert not is_ref_name(bad), bad


def test_hex_prefix() -> None:
    assert is_hex_prefix("abcd") and is_hex_prefix("0" * 40)
    assert not is_hex_prefix("abc") and not is_hex_prefix("ABCD") and not is_hex_prefix("v1")


def test_repo_paths() -> None:
    assert check_repo_path("build/torch-cpu/__init__.py")
    for bad in ("", "/abs", "a/../b", "a//b", "./a", ".git/config", "a\nb", "a\\b"):
        with pytest.raises(HubError, match="invalid path"):
            check_repo_path(bad)


def test_prefixes_are_plain_string_prefixes() -> None:
    assert under_prefixes("build/x/a.py", ("build/x/",))
    assert not under_prefixes("build/xy/a.py", ("build/x/",))
    assert under_prefixes("benchmarks/benchmark_a.py", ("benchmarks/benchmark",))
    assert under_prefixes("anything", ("",))
    assert not under_prefixes("README.md", ())


def test_release_tags() -> None:
    assert check_tag("v1.2.0", "v1") == "v1.2.0"
    assert check_tag("v10.0.3", "v10") == "v10.0.3"
    with pytest.raises(HubError, match="major version 2 but the branch is v1"):
        check_tag("v2.0.0", "v1")
    for bad in ("1.2.0", "v1.2", "v1.02.0", "v1.2.0-rc1"):
        with pytest.raises(HubError, match="invalid release tag"):
            check_tag(bad, "v1")
    with pytest.raises(HubError, match="needs a version branch"):
        check_tag("v1.0.0", "main")


def test_render_card_fills_known_placeholders_only() -> None:
    text = "# {{name}}\nget_kernel(\"{{ repo_id }}\", version={{version}}) {{ unknown }}"
    out = render_card(text, {"name": "relu", "repo_id": "acme/relu", "version": "2"})
    assert out == "# relu\nget_kernel(\"acme/relu\", version=2) {{ unknown }}"


def test_open_hub_dispatch(tmp_path: Path) -> None:
    env = {"KERNELKIT_HUB_DIR": str(tmp_path / "hubdir"), "KERNELKIT_CACHE": str(tmp_path / "c")}
    hub = open_hub(None, env=env)
    assert isinstance(hub, LocalGitHub) and hub.root == tmp_path / "hubdir"
    hub = open_hub(None, env={**env, "KERNELKIT_HUB": str(tmp_path / "other")})
    assert isinstance(hub, LocalGitHub) and hub.root == tmp_path / "other"
    assert isinstance(open_hub(tmp_path / "p", env=env), LocalGitHub)
    remote = open_hub("git+file:///srv/kernels", env=env)
    assert isinstance(remote, GitRemoteHub)
    assert remote.remote_url("acme/relu") == "file:///srv/kernels/acme/relu.git"
    assert remote.mirror.root.is_relative_to(tmp_path / "c")
    templ = open_hub("ssh://git@host/{org}/{name}.git", env=env)
    assert isinstance(templ, GitRemoteHub)
    assert templ.remote_url("acme/relu") == "ssh://git@host/acme/relu.git"
    with pytest.raises(HubError, match="unsupported hub"):
        open_hub("ftp://x/y", env=env)
    (tmp_path / "file").write_text("")
    with pytest.raises(HubError, match="is a file"):
        open_hub(str(tmp_path / "file"), env=env)


def test_check_publish_validates_branch_and_every_path() -> None:
    import pytest

    from kernelkit.errors import HubError
    from kernelkit.hub.names import check_publish

    check_publish("v1", ["build/x/__init__.py", "README.md"])
    with pytest.raises(HubError, match="invalid path"):
        check_publish("v1", ["build/ok.py", "../escape.py"])
    with pytest.raises(HubError):
        check_publish("bad branch name", [])
