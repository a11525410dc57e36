"""The environment ``kernelkit test`` gives a project's suite: its variant under its repo ids,
and the caller's ``LOCAL_KERNELS`` entries for the other kernels the suite loads."""

from __future__ import annotations

from pathlib import Path

from kernelkit.loader.local import parse_local_kernels
from kernelkit.manifest import load_manifest
from kernelkit.testing.run import variant_environ

BUILD_TOML = """[general]
name = "symbol-conflicts2"
version = 1
edition = 5
license = "Apache-2.0"
backends = ["cpu"]

[general.hub]
repo-id = "kernels-test/symbol-conflicts2"

[torch-noarch]

[kernel]
"""


def _manifest(tmp_path: Path):  # type: ignore[no-untyped-def]
    (tmp_path / "build.toml").write_text(BUILD_TOML)
    return load_manifest(tmp_path, check_sources=False)


def test_local_kernels_points_the_repo_ids_at_the_variant(tmp_path: Path) -> None:
    env = variant_environ(_manifest(tmp_path), tmp_path / "imp", tmp_path / "local", {})
    assert parse_local_kernels(env["LOCAL_KERNELS"]) == {
        "kernels-test/symbol-conflicts2": tmp_path / "local",
        "symbol-conflicts2": tmp_path / "local"}
    assert env["PYTHONPATH"] == str(tmp_path / "imp")


def test_callers_local_kernels_for_other_kernels_are_kept_and_ours_win(tmp_path: Path) -> None:
    base = {"LOCAL_KERNELS": "kernels-test/symbol-conflicts=/src/one:"
                             "kernels-test/symbol-conflicts2=/stale", "PYTHONPATH": "/x"}
    env = variant_environ(_manifest(tmp_path), tmp_path / "imp", tmp_path / "local", base)
    assert parse_local_kernels(env["LOCAL_KERNELS"]) == {
        "kernels-test/symbol-conflicts": Path("/src/one"),
        "kernels-test/symbol-conflicts2": tmp_path / "local",
        "symbol-conflicts2": tmp_path / "local"}
    assert env["PYTHONPATH"].split(":") == [str(tmp_path / "imp"), "/x"]
