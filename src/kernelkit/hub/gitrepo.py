"""One bare git repository, driven through git plumbing (used by the local and remote hubs).

These commands exchange *binary* data with git (blob bytes from ``cat-file --batch``,
NUL-separated listings) and their stdout is parsed, so they go through the byte variants of the
one subprocess wrapper (``kernelkit.util.run``: ``run_bytes`` and ``open_process``); a failure
is a :class:`~kernelkit.errors.CommandError` (a missing ``git`` too).

Each method runs one git process (``calls`` counts them, so tests can hold the count down).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from kernelkit.errors import HubError
from kernelkit.hub.names import check_tree_paths
from kernelkit.settings import process_environ
from kernelkit.util.fs import temp_sibling
from kernelkit.util.run import open_process, run, run_bytes

ZERO_ID = "0" * 40
FILE_MODE = "100644"
_CHUNK = 1 << 20
DEFAULT_IDENTITY = ("kernelkit", "kernelkit@localhost")


@dataclass(frozen=True)
class TreeEntry:
    path: str
    mode: str
    oid: str
    size: int


def _subcommand(args: Sequence[str]) -> str:
    """``git <subcommand>`` of ``args``, past any ``-c name=value`` in front (for messages)."""
    i = 0
    while i < len(args) and args[i] == "-c":
        i += 2
    return f"git {args[i] if i < len(args) else ''}".strip()


class GitRepo:
    """A bare repository at ``git_dir``."""

    def __init__(self, git_dir: Path, identity: tuple[str, str] = DEFAULT_IDENTITY) -> None:
        self.git_dir = git_dir
        self.identity = identity
        self.calls = 0

    # --- running git -----------------------------------------------------------------------

    def _env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        name, email = self.identity
        env = dict(process_environ())
        env.update(GIT_TERMINAL_PROMPT="0", LC_ALL="C", GIT_AUTHOR_NAME=name,
                   GIT_AUTHOR_EMAIL=email, GIT_COMMITTER_NAME=name, GIT_COMMITTER_EMAIL=email)
        env.pop("GIT_DIR", None)
        env.pop("GIT_INDEX_FILE", None)
        env.update(extra or {})
        return env

    def argv(self, args: Sequence[str]) -> list[str]:
        return ["git", f"--git-dir={self.git_dir}", *args]

    def git(self, *args: str, input: bytes | None = None, check: bool = True,
            env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
        """Run ``git --git-dir=<repo> <args>``; bytes out, stderr kept apart."""
        self.calls += 1
        return run_bytes(self.argv(args), input=input, check=check, env=self._env(env),
                         what=_subcommand(args))

    def git_lines(self, *args: str, on_line: Callable[[str], None],
                  env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """Run ``git --git-dir=<repo> <args>`` passing each line of its merged output to
        ``on_line`` as it arrives (a carriage return ends a line too: git's progress); the
        exit status is the caller's to check."""
        self.calls += 1
        return run(self.argv(args), env=self._env(env), on_line=on_line, check=False,
                   what=_subcommand(args))

    # --- existence -------------------------------------------------------------------------

    def exists(self) -> bool:
        return (self.git_dir / "HEAD").is_file() and (self.git_dir / "objects").is_dir()

    def init(self) -> None:
        """Create the bare repository atomically (built in a temporary sibling, then renamed)."""
        if self.exists():
            return
        self.git_dir.parent.mkdir(parents=True, exist_ok=True)
        tmp = temp_sibling(self.git_dir, "init")
        self.calls += 1
        # No template: no sample hooks to copy (10x faster) and none to run.
        run_bytes(["git", "init", "-q", "--bare", "--template=", "-b", "main", str(tmp)],
                  env=self._env(), what="git init")
        try:
            os.rename(tmp, self.git_dir)
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)  # someone else created it first
            if not self.exists():
                raise

    # --- reading ---------------------------------------------------------------------------

    def refs(self) -> tuple[dict[str, str], dict[str, str]]:
        """``(branches, tags)``, each name -> commit id (annotated tags peeled)."""
        return split_refs(self.ref_table("refs/heads", "refs/tags"))

    def ref_table(self, *prefixes: str) -> dict[str, str]:
        """Full ref name -> commit id for every ref under ``prefixes`` (tags peeled)."""
        out = self.git("for-each-ref", "--format=%(refname)%00%(objectname)%00%(*objectname)",
                       *prefixes).stdout.decode()
        table: dict[str, str] = {}
        for line in out.splitlines():
            ref, oid, peeled = line.split("\0")
            table[ref] = peeled or oid
        return table

    def lookup(self, names: Sequence[str]) -> list[tuple[str, str] | None]:
        """Resolve each revision expression to ``(oid, type)``; ``None`` if missing/ambiguous.
        One process for all names (``git cat-file --batch-check``)."""
        data = "".join(f"{n}\n" for n in names).encode()
        out = self.git("cat-file", "--batch-check", input=data).stdout.decode().splitlines()
        result: list[tuple[str, str] | None] = []
        for line in out:
            parts = line.split(" ")
            ok = len(parts) == 3 and parts[2].isdigit() and parts[1] != "missing"
            result.append((parts[0], parts[1]) if ok else None)
        return result

    def ls_tree(self, commit: str) -> list[TreeEntry]:
        """Every blob (recursively) at ``commit``, with its mode, blob id and size."""
        out = self.git("ls-tree", "-r", "-l", "-z", "--full-tree", commit).stdout
        entries = []
        for rec in out.split(b"\0"):
            if not rec:
                continue
            meta, _, path = rec.partition(b"\t")
            mode, typ, oid, size = meta.decode().split()
            if typ == "blob":
                entries.append(TreeEntry(path.decode(), mode, oid, int(size)))
        return entries

    def cat_blob(self, spec: str) -> bytes | None:
        """Bytes of the blob ``<commit>:<path>``; ``None`` if there is none."""
        proc = self.git("cat-file", "blob", spec, check=False)
        return proc.stdout if proc.returncode == 0 else None

    def write_blobs(self, commit: str, items: Iterable[tuple[str, Path]]) -> None:
        """Write ``<commit>:<path>`` to each target file; one ``cat-file --batch`` process.

        Each file is written to a temporary sibling and renamed into place; a missing path
        raises ``HubError`` naming it."""
        self.calls += 1
        with open_process(self.argv(["cat-file", "--batch"]), env=self._env(),
                          what="git cat-file") as proc:
            assert proc.stdin is not None and proc.stdout is not None
            try:
                for path, target in items:
                    proc.stdin.write(f"{commit}:{path}\n".encode())
                    proc.stdin.flush()
                    _copy_one(proc.stdout, path, commit, target)
            finally:
                proc.stdin.close()

    # --- writing ---------------------------------------------------------------------------

    def hash_files(self, files: Sequence[Path]) -> list[str]:
        """Store each file as a blob (``hash-object -w``); return the blob ids, in order."""
        if not files:
            return []
        names = [str(Path(f).resolve()) for f in files]
        if any("\n" in n for n in names):
            raise HubError("cannot publish a file whose local path contains a newline")
        data = "".join(f"{n}\n" for n in names).encode()
        out = self.git("hash-object", "-w", "--no-filters", "--stdin-paths", input=data).stdout
        oids = out.decode().split()
        if len(oids) != len(files):
            raise HubError(f"git hash-object returned {len(oids)} ids for {len(files)} files")
        return oids

    def next_tree(self, parent: str | None, files: Mapping[str, Path],
                  drop: Callable[[str], bool]) -> str:
        """The tree of the next commit after ``parent`` (``None``: an empty start): its files
        minus those ``drop`` selects, plus ``files`` (repo path -> local file, added or
        replaced). Every hub backend and ``kernelkit serve`` build their commits here, so one
        tree rule holds for all (:meth:`write_tree`)."""
        entries: dict[str, tuple[str, str]] = {}
        if parent is not None:
            entries = {e.path: (e.mode, e.oid) for e in self.ls_tree(parent) if not drop(e.path)}
        names = sorted(files)
        for name, oid in zip(names, self.hash_files([files[n] for n in names]), strict=True):
            entries[name] = (FILE_MODE, oid)
        return self.write_tree((m, o, p) for p, (m, o) in sorted(entries.items()))

    def write_tree(self, entries: Iterable[tuple[str, str, str]]) -> str:
        """Tree id of ``(mode, oid, path)`` entries, built in a temporary index file. A path
        that would be both a file and a directory is refused (``TreeClashError``): git's index
        would keep one of them and silently drop the other."""
        listed = list(entries)
        check_tree_paths(path for _mode, _oid, path in listed)
        data = b"".join(f"{mode} {oid}\t{path}".encode() + b"\0" for mode, oid, path in listed)
        with tempfile.TemporaryDirectory(prefix="kernelkit-index-") as tmp:
            env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            self.git("update-index", "-z", "--index-info", input=data, env=env)
            return self.git("write-tree", env=env).stdout.decode().strip()

    def commit_tree(self, tree: str, parent: str | None, message: str) -> str:
        args = ["commit-tree", tree, *(["-p", parent] if parent else []), "-F", "-"]
        return self.git(*args, input=message.encode()).stdout.decode().strip()

    def update_ref(self, ref: str, new: str, old: str | None, message: str = "") -> str | None:
        """Compare-and-swap ``ref`` from ``old`` (``None``: must not exist) to ``new``.
        Returns ``None`` on success, else git's explanation."""
        proc = self.git("update-ref", "-m", message or "kernelkit", ref, new, old or ZERO_ID,
                        check=False)
        return None if proc.returncode == 0 else proc.stderr.decode(errors="replace").strip()


def _copy_one(stream: IO[bytes], path: str, commit: str, target: Path) -> None:
    read = stream.read
    header = stream.readline().decode(errors="replace").split()
    if len(header) != 3 or header[1] != "blob":
        raise HubError(f"{path} does not exist at commit {commit}",
                       hint="list the files of that revision; the path may be misspelled")
    left = int(header[2])
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_sibling(target, "incomplete")
    try:
        with open(tmp, "wb") as fh:
            while left:
                chunk = read(min(left, _CHUNK))
                if not chunk:
                    raise HubError(f"git cat-file ended early while reading {path}")
                fh.write(chunk)
                left -= len(chunk)
        read(1)  # the newline after each object
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def split_refs(table: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """``(branches, tags)`` by short name from a :meth:`GitRepo.ref_table`."""
    branches = {r[len("refs/heads/"):]: c for r, c in table.items() if r.startswith("refs/heads/")}
    tags = {r[len("refs/tags/"):]: c for r, c in table.items() if r.startswith("refs/tags/")}
    return branches, tags
