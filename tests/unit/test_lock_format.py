"""kernels.lock: upstream's format (written byte for byte as upstream writes it, read as strictly
as upstream reads it), kernelkit's hash sidecar, kernelkit's previous format, and the lock hash.

``data/lock/upstream.lock`` was written by kernels 0.19.1's own ``KernelLocks.to_json``."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from kernelkit.errors import LockError
from kernelkit.hub.port import FileEntry
from kernelkit.lock.hashing import concat_hash, git_blob_id, hash_variant_dir, variant_hashes
from kernelkit.lock.lockfile import (
    KernelLock,
    VariantLock,
    dumps_locks,
    hashes_path,
    lock_entry,
    parse_lock_file,
    parse_locks,
    read_lock_file,
    read_locks,
    write_locks,
)

DATA = Path(__file__).parent.parent / "data" / "lock"


def test_upstream_lockfile_round_trips_byte_for_byte() -> None:
    text = (DATA / "upstream.lock").read_text()
    locks, legacy = parse_lock_file(text)
    assert not legacy
    assert [lock.repo_id for lock in locks] == [
        "kernels-community/activation", "kernels-community/relu", "kernels-test/versions"]
    lock = lock_entry(locks, "kernels-test/versions")
    assert lock == KernelLock("kernels-test/versions",
                              "f609e51b856b3d874b0ae8445913e200f02c1735", {}, version=1)
    assert locks[0].revision == "v0.1.0" and locks[0].version is None
    assert dumps_locks(reversed(locks)) == text  # sorted, 2-space indent, no final newline


def test_kernelkits_previous_format_is_read_with_its_hashes() -> None:
    locks, legacy = parse_lock_file((DATA / "kernelkit-previous.lock").read_text())
    assert legacy
    lock = lock_entry(locks, "kernels-test/versions")
    assert lock is not None and lock.sha == "f609e51b856b3d874b0ae8445913e200f02c1735"
    assert lock.variants["torch-cpu"] == VariantLock(
        "sha256-d9fced49c3beeb47ce5b996c28f760bec579cf444f9fe1040725686b13b1336e")


def test_hashes_go_to_the_sidecar_and_apply_to_their_commit_only(tmp_path: Path) -> None:
    path = tmp_path / "kernels.lock"
    a = KernelLock("b/x", "1" * 40, {"z": VariantLock("sha256-" + "a" * 64),
                                     "a": VariantLock("sha256-" + "b" * 64)}, version=1)
    b = KernelLock("a/y", "2" * 40, {}, revision="v1.2.0")
    assert write_locks(path, [a, b]) is True
    text = path.read_text()
    assert "hash" not in text and "variants" not in text  # upstream's strict reader
    assert text.index('"a/y"') < text.index('"b/x"') and not text.endswith("\n")
    side = hashes_path(path).read_text()
    assert side.index('"a": {') < side.index('"z": {') and '"a/y"' not in side
    assert read_locks(path) == [b, a]
    # upstream re-locks b/x to another commit: the stale hashes no longer apply
    moved = text.replace("1" * 40, "3" * 40)
    path.write_text(moved)
    assert lock_entry(read_locks(path), "b/x") == KernelLock("b/x", "3" * 40, {}, version=1)
    # no hashes left at all: the sidecar goes
    assert write_locks(path, [b]) is True and not hashes_path(path).exists()


def test_dump_sorts_entries() -> None:
    a = KernelLock("b/x", "1" * 40, {}, version=2)
    b = KernelLock("a/y", "2" * 40, {}, version=1)
    text = dumps_locks([a, b])
    assert text.index('"a/y"') < text.index('"b/x"')
    assert text.startswith('[\n  {\n    "dependency": {\n      "repo-id": "a/y",\n')


ZERO = "0" * 40


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{}", "must be a JSON list"),
        ("[{]", "not valid JSON"),
        ('[{"dependency": {"repo-id": "a/b", "version": 1}, "lock": {"commit": "' + ZERO
         + '", "variants": {}}}]', "entry 0.lock: unknown field 'variants', expected 'commit'"),
        ('[{"dependency": {"repo-id": "a/b", "version": 1}, "lock": {"commit": "' + ZERO
         + '"}, "hashes": 1}]', "unknown field 'hashes', expected 'dependency' or 'lock'"),
        ('[{"dependency": {"repo-id": "a/b", "version": 1, "revision": "x"}, "lock": '
         '{"commit": "' + ZERO + '"}}]', "exactly one of 'version' and 'revision'"),
        ('[{"dependency": {"repo-id": "a/b"}, "lock": {"commit": "' + ZERO + '"}}]',
         "exactly one of 'version' and 'revision'"),
        ('[{"dependency": {"repo-id": "a/b", "version": -1}, "lock": {"commit": "' + ZERO
         + '"}}]', "'version' must be a non-negative integer"),
        ('[{"dependency": {"repo-id": "a/b", "version": ">=1"}, "lock": {"commit": "' + ZERO
         + '"}}]', "'version' must be a non-negative integer"),
        ('[{"dependency": {"repo-id": "../x", "version": 1}, "lock": {"commit": "' + ZERO
         + '"}}]', "'dependency.repo-id' must be a string 'org/name'"),
        ('[{"dependency": {"repo-id": "a/b", "version": 1}, "lock": {"commit": "abc"}}]',
         "'lock.commit' must be a full commit id"),
        ('[{"dependency": {"repo-id": "a/b", "version": 1}, "lock": {"commit": "' + ZERO
         + '"}}, {"dependency": {"repo-id": "a/b", "version": 1}, "lock": {"commit": "' + ZERO
         + '"}}]', "a/b is locked twice"),
        ('[{"repo_id": "a/b", "sha": "xyz", "variants": {}}]', "'sha' must be a full commit"),
        ('[{"repo_id": "a/b", "sha": "' + ZERO + '", "variants": {"torch-cpu": '
         '{"hash": "sha256-00", "hash_type": "git_lfs_concat"}}}]', "variant 'torch-cpu'"),
        ('[{"repo_id": "a/b", "sha": "' + ZERO + '", "variants": {"torch-cpu": '
         '{"hash": "sha256-' + "0" * 64 + '", "hash_type": "md5"}}}]', "variant 'torch-cpu'"),
    ],
)
def test_malformed_lockfiles_are_refused(text: str, message: str) -> None:
    with pytest.raises(LockError, match=re.escape(message)):
        parse_locks(text, "x/kernels.lock")


def test_malformed_sidecar_is_refused_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "kernels.lock"
    path.write_text((DATA / "upstream.lock").read_text())
    hashes_path(path).write_text('{"kernels": {}}')
    with pytest.raises(LockError, match=r"kernels\.lock\.hashes: not a kernelkit lock-hash file"):
        read_lock_file(path)


def test_missing_lockfile_says_how_to_create_it(tmp_path: Path) -> None:
    with pytest.raises(LockError, match=r"No kernels.lock file found") as info:
        read_locks(tmp_path / "kernels.lock")
    assert "kernelkit lock" in str(info.value)


def test_write_skips_identical_content(tmp_path: Path) -> None:
    path = tmp_path / "kernels.lock"
    locks = [KernelLock("a/b", "1" * 40, {"torch-cpu": VariantLock("sha256-" + "c" * 64)},
                        version=1), KernelLock("c/d", "2" * 40, {}, version=3)]
    assert write_locks(path, locks) is True
    before = (path.stat().st_mtime_ns, hashes_path(path).stat().st_mtime_ns)
    assert write_locks(path, list(reversed(locks))) is False
    assert (path.stat().st_mtime_ns, hashes_path(path).stat().st_mtime_ns) == before


def test_concat_hash_matches_the_upstream_definition() -> None:
    pairs = [("sub/b.so", "00" * 20), ("__init__.py", "11" * 32)]
    expected = hashlib.sha256(b"__init__.py" + b"\x11" * 32 + b"sub/b.so" + b"\x00" * 20)
    assert concat_hash(pairs) == "sha256-" + expected.hexdigest()


def test_listing_and_disk_give_the_same_hash(tmp_path: Path) -> None:
    vdir = tmp_path / "build" / "torch-cpu"
    (vdir / "pkg").mkdir(parents=True)
    (vdir / "__init__.py").write_text("x = 1\n")
    (vdir / "pkg" / "big.so").write_bytes(b"\x7fELF" + bytes(range(256)) * 10)
    (vdir / "__pycache__").mkdir()
    (vdir / "__pycache__" / "m.cpython-311.pyc").write_bytes(b"junk")
    (vdir / "stale.pyc").write_bytes(b"junk")
    rels = ("__init__.py", "pkg/big.so", "stale.pyc", "__pycache__/m.cpython-311.pyc")
    entries = [FileEntry(f"build/torch-cpu/{rel}", 0, git_blob_id(vdir / rel)) for rel in rels]
    listed = variant_hashes(entries)
    assert listed == {"torch-cpu": hash_variant_dir(vdir)}
    # an LFS file is hashed by its sha256 on both sides
    big_sha = hashlib.sha256((vdir / "pkg" / "big.so").read_bytes()).hexdigest()
    entries[1] = FileEntry("build/torch-cpu/pkg/big.so", 0, "ff" * 20, sha256=big_sha)
    lfs = variant_hashes(entries)["torch-cpu"]
    assert lfs == hash_variant_dir(vdir, lfs={"pkg/big.so"}) != listed["torch-cpu"]
    # one changed byte changes the hash
    (vdir / "__init__.py").write_text("x = 2\n")
    assert hash_variant_dir(vdir) != listed["torch-cpu"]


def test_an_entry_without_a_dependency_is_written_as_its_commit() -> None:
    """kernelkit's previous format recorded no dependency; written in upstream's format, the
    entry depends on the commit it pins (a revision upstream reads)."""
    [lock] = parse_locks('[{"repo_id": "a/b", "sha": "' + "4" * 40 + '", "variants": {}}]')
    assert json.loads(dumps_locks([lock])) == [
        {"dependency": {"repo-id": "a/b", "revision": "4" * 40}, "lock": {"commit": "4" * 40}}]
