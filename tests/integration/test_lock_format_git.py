"""The lock hash's git blob id against git itself.

Moved from tests/unit/test_lock_format.py: it runs git.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from kernelkit.lock.hashing import git_blob_id


def test_git_blob_id_equals_git_hash_object(tmp_path: Path) -> None:
    f = tmp_path / "f.bin"
    f.write_bytes(b"\x00hello\nworld" * 1000)
    out = subprocess.run(["git", "hash-object", str(f)], capture_output=True, text=True, check=True)
    assert git_blob_id(f) == out.stdout.strip()
