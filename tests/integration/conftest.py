"""Fixtures shared by the integration tests (session-wide ones live in ``tests/conftest.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelkit.hub.local import LocalGitHub


@pytest.fixture
def hub(tmp_path: Path) -> LocalGitHub:
    """An empty local hub (a directory of bare git repositories) in this test's tmp_path."""
    return LocalGitHub(tmp_path / "hub")
