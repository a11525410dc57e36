"""The published sources as a value (``kernelkit.artifact.sources``): a deterministic archive,
the digest the builder records, an unpack that trusts nothing before the digest matched; and
the lock sidecar's pin of that digest (issue 29)."""

from __future__ import annotations

import io
import json
import os
import tarfile
from pathlib import Path

import pytest

from kernelkit.artifact.sources import (
    archive_repo_path,
    extract_archive,
    record_of,
    sources_digest,
    write_archive,
)
from kernelkit.errors import IntegrityError, LockError
from kernelkit.lock.lockfile import KernelLock, VariantLock, read_lock_file, write_locks

COMMIT = "a" * 40
HASH = "sha256-" + "b" * 64


def _tree(root: Path) -> list[Path]:
    files = {"build.toml": "[general]\nname = 'x'\n", "kernel/k.cpp": "int k() { return 1; }\n",
             "torch-ext/x/__init__.py": "from ._ops import ops\n", "ünï/ç.h": "// é\n"}
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return [root / rel for rel in files]


def _tar(members: list[tuple[tarfile.TarInfo, bytes]]) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
        for info, data in members:
            info.size = len(data) if info.isfile() else 0
            tar.addfile(info, io.BytesIO(data) if info.isfile() else None)
    return raw.getvalue()


def test_the_archive_is_deterministic_and_named_by_its_digest(tmp_path: Path) -> None:
    root = tmp_path / "p"
    files = _tree(root)
    first = write_archive(root, files, tmp_path / "a")
    for f in files:  # other times, modes and listing order change nothing
        os.utime(f, (1, 1))
        f.chmod(0o600)
    second = write_archive(root, list(reversed(files)), tmp_path / "b")
    assert first.path.read_bytes() == second.path.read_bytes()
    assert first.digest == second.digest == sources_digest(root, files)
    assert first.repo_path == archive_repo_path(first.digest) == (
        f"sources/{first.digest.removeprefix('sha256:')}.tar.gz")
    assert first.path.name == first.repo_path.rsplit("/", 1)[1] and first.files == 4
    with tarfile.open(first.path) as tar:
        members = tar.getmembers()
    assert [m.name for m in members] == sorted(m.name for m in members)
    assert {(m.mtime, m.uid, m.gid, m.uname, m.gname) for m in members} == {(0, 0, 0, "", "")}


def test_the_digest_is_the_builders_source_digest(img2gray_project: Path) -> None:
    """One definition: the builder's build-id digest of a project equals the archive's."""
    from kernelkit.builder.caches.build_cache import source_digest, source_files
    from kernelkit.manifest import load_manifest

    manifest = load_manifest(img2gray_project)
    assert sources_digest(manifest.root, source_files(manifest)) == source_digest(manifest)


def test_unpack_checks_every_byte_against_the_digest(tmp_path: Path) -> None:
    root = tmp_path / "p"
    files = _tree(root)
    archive = write_archive(root, files, tmp_path / "a")
    assert extract_archive(archive.path, tmp_path / "ok", archive.digest, "w") == 4
    unpacked = tmp_path / "ok" / "kernel" / "k.cpp"
    assert unpacked.read_bytes() == (root / "kernel/k.cpp").read_bytes()
    (root / "kernel" / "k.cpp").write_text("int k() { return 2; }\n")  # same names, one byte
    tampered = write_archive(root, files, tmp_path / "t")
    with pytest.raises(IntegrityError) as err:
        extract_archive(tampered.path, tmp_path / "bad", archive.digest, "org/x:sources/y")
    assert err.value.expected == archive.digest and "tampered" in str(err.value)
    assert not (tmp_path / "bad").exists()


@pytest.mark.parametrize(("member", "why"), [
    (tarfile.TarInfo("../evil.py"), "relative paths"),
    (tarfile.TarInfo("/etc/evil"), "relative paths"),
    (tarfile.TarInfo("a/./b"), "relative paths"),
])
def test_hostile_paths_are_refused_before_anything_is_written(tmp_path: Path,
                                                               member: tarfile.TarInfo,
                                                               why: str) -> None:
    archive = tmp_path / "x.tar.gz"
    archive.write_bytes(_tar([(member, b"boom")]))
    with pytest.raises(IntegrityError, match=why):
        extract_archive(archive, tmp_path / "out", "sha256:" + "0" * 64, "w")
    assert not (tmp_path / "out").exists() and not (tmp_path / "evil.py").exists()


def test_links_devices_and_duplicates_are_refused(tmp_path: Path) -> None:
    link = tarfile.TarInfo("build.toml")
    link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
    for members in ([(link, b"")], [(tarfile.TarInfo("a"), b"1"), (tarfile.TarInfo("a"), b"2")]):
        archive = tmp_path / "x.tar.gz"
        archive.write_bytes(_tar(members))
        with pytest.raises(IntegrityError) as err:
            extract_archive(archive, tmp_path / "out", "sha256:" + "0" * 64, "w")
        assert "nothing of it was used" in str(err.value)
        assert not (tmp_path / "out").exists()
    archive.write_bytes(b"not a gzip at all")
    with pytest.raises(IntegrityError, match="unreadable"):
        extract_archive(archive, tmp_path / "out", "sha256:" + "0" * 64, "w")


def test_the_record_of_a_variant_is_validated() -> None:
    digest = "sha256:" + "c" * 64
    assert record_of({"sources": {"digest": digest, "files": 3, "commit": COMMIT}}).digest == digest
    for bad in ({}, {"sources": "x"}, {"sources": {"digest": "sha256:abc"}},
                {"sources": {"digest": "md5:" + "c" * 64}}):
        assert record_of(bad) is None
    with pytest.raises(ValueError, match="not a sources digest"):
        archive_repo_path("sha256:../../etc")


def test_the_lock_sidecar_pins_the_sources(tmp_path: Path) -> None:
    digest = "sha256:" + "d" * 64
    path = tmp_path / "kernels.lock"
    lock = KernelLock("org/k", COMMIT, {"torch213-cxx11-cpu-x86_64-linux": VariantLock(HASH)},
                      version=1, sources=digest)
    write_locks(path, [lock])
    assert "sources" not in path.read_text()  # upstream's file stays upstream's
    side = json.loads((tmp_path / "kernels.lock.hashes").read_text())
    assert side["kernels"]["org/k"]["sources"] == digest
    assert read_lock_file(path).locks[0].sources == digest
    side["kernels"]["org/k"]["sources"] = "sha256:nothex"
    (tmp_path / "kernels.lock.hashes").write_text(json.dumps(side))
    with pytest.raises(LockError, match="'sources' must be a digest"):
        read_lock_file(path)
