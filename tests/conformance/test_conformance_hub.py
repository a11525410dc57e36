"""Upstream's hub loader on kernelkit's build, served by ``kernelkit serve`` (the Hub HTTP API
over a local hub): ``get_kernel`` by version, and the listing commands."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.conformance.support import CHECK_IMG2GRAY, REPO_ID, Served
from tests.upstream_envs import UpstreamEnv

pytestmark = pytest.mark.slow  # the session's compiled img2gray build

GET_KERNEL = CHECK_IMG2GRAY + textwrap.dedent(f"""
    import kernels
    check(kernels.get_kernel({REPO_ID!r}, version=1))
""")


def test_their_get_kernel_through_serve(upstream: UpstreamEnv, served: Served,
                                        tmp_path: Path) -> None:
    """Row "hub: get_kernel(version=1) through kernelkit serve": upstream resolves v1, lists the
    variants, downloads this machine's (symbols.json included), verifies and runs it."""
    out = upstream.run(GET_KERNEL, env=served.env(tmp_path))
    assert "CONFORMANCE-OK" in out.stdout, out.stderr[-2000:]
    assert served.commit in out.stdout  # the snapshot of the served commit


def test_their_listing_commands_through_serve(upstream: UpstreamEnv, served: Served,
                                              tmp_path: Path) -> None:
    """Row "hub: kernels versions / variants": both list the served v1 and its variant."""
    command = "variants" if upstream.version >= "0.19" else "versions"
    out = upstream.cli(command, REPO_ID, env=served.env(tmp_path))
    assert out.returncode == 0, out.stderr[-2000:]
    assert "compatible" in out.stdout
