"""Issue 27 item 1, as a new user met it: each test is one thing seen ("What we saw") that now
behaves as docs/cli.md says, run through the real command line (in this process through
``run_cli``, or as a real process where pipes, signals or imports are the point) against real
local hubs, a real ``kernelkit serve`` and real projects."""

from __future__ import annotations

import io
import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from kernelkit.errors import ExitCode
from kernelkit.hub.local import LocalGitHub
from kernelkit.variants.host import detect_system
from tests.helpers import make_variant, publish_build, run_cli

REPO = "acme/demo"
HOST = detect_system().arch_variant() or "torch-cpu"
SRC = str(Path(__file__).resolve().parents[2] / "src")


def publish(hub: LocalGitHub, tmp: Path, branch: str, variants: tuple[str, ...] = (HOST,),
            repo: str = REPO) -> str:
    build = tmp / f"build-{uuid.uuid4().hex[:8]}"
    for v in variants:
        make_variant(build, v, uid=uuid.uuid4().hex[:7])
    return publish_build(hub, repo, branch, build)


@pytest.fixture
def hub(hub: LocalGitHub, tmp_path: Path) -> LocalGitHub:
    """The shared empty hub (tests/integration/conftest.py) with acme/demo (v1, v1.0.0) and
    acme/unversioned (main only)."""
    commit = publish(hub, tmp_path, "v1")
    hub.tag(REPO, "v1.0.0", commit)
    publish(hub, tmp_path, "main", repo="acme/unversioned")
    return hub


def kernelkit_process(*args: str, **kw: Any) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": SRC}
    return subprocess.Popen([sys.executable, "-m", "kernelkit", *args], env=env, **kw)


# --- exit codes and errors ----------------------------------------------------------------------


@pytest.mark.parametrize("argv", [
    ["info", "acme/nothing"], ["versions", "acme/nothing"], ["variants", "acme/nothing"],
    ["hub", "list", "acme/nothing"], ["to-wheel", "acme/nothing", "--version", "1"],
], ids=lambda argv: " ".join(argv[:2]))
def test_an_unknown_repository_is_not_found_3(argv: list[str], hub: LocalGitHub) -> None:
    out = run_cli(*argv, "--hub", str(hub.root))
    assert out.returncode == ExitCode.NOT_FOUND, out.stderr
    assert f"kernel repository acme/nothing not found on the hub at {hub.root}" in out.stderr


def test_a_closed_pipe_ends_quietly(hub: LocalGitHub) -> None:
    """`kernelkit versions X | true`: the reader is gone before anything is written."""
    proc = kernelkit_process("variants", REPO, "--all-versions", "--hub", str(hub.root),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    with proc:
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()  # as `| true` does, long before the interpreter has started
        err = proc.stderr.read().decode()
        assert proc.wait(timeout=120) == ExitCode.BROKEN_PIPE
    assert err == "", err  # not "error: Broken pipe / hint: check that the path exists"


def test_ctrl_c_prints_interrupted_and_exits_130(tmp_path: Path) -> None:
    """Ctrl-C while a command waits on the network (a git hub that accepts the connection and
    never answers): one line, exit code 130, no traceback."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"git+http://127.0.0.1:{silent.getsockname()[1]}/{{repo_id}}.git"
        proc = kernelkit_process("hub", "ls", REPO, "--hub", url, start_new_session=True,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 cwd=tmp_path)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not _readable(silent):  # until git connects
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.1)
        conn, _ = silent.accept()
        with conn, proc:
            time.sleep(0.5)
            os.killpg(proc.pid, signal.SIGINT)  # the terminal sends it to the whole group
            _, err = proc.communicate(timeout=60)
    assert proc.returncode == ExitCode.INTERRUPTED, err
    assert err.decode().strip().splitlines()[-1] == "interrupted"
    assert b"Traceback" not in err


def _readable(sock: socket.socket) -> bool:
    import select

    return bool(select.select([sock], [], [], 0)[0])


def test_a_missing_optional_dependency_names_its_extra(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """`serve` without uvicorn, `upload --hub hf` without huggingface_hub: one line with the
    install command, never a ModuleNotFoundError traceback (the package made unimportable in
    this process, as when it is not installed)."""
    monkeypatch.setitem(sys.modules, "uvicorn", None)
    out = run_cli("serve", "--hub", str(tmp_path / "hub"), "--port", "0")
    assert out.returncode == ExitCode.ERROR
    assert "pip install 'kernelkit[serve]'" in out.stderr and "uvicorn" in out.stderr
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)
    make_variant(tmp_path / "p" / "build", HOST)
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    out = run_cli("upload", str(tmp_path / "p"), "--repo-id", REPO, "--hub", "hf")
    assert out.returncode == ExitCode.ERROR, out.stderr
    assert "pip install 'kernelkit[hf]'" in out.stderr and "huggingface_hub" in out.stderr


def test_a_mistyped_command_gets_did_you_mean() -> None:
    out = run_cli("bulid")
    assert out.returncode == ExitCode.USAGE
    assert "unknown command 'bulid'; did you mean 'build'?" in out.stderr
    out = run_cli("hub", "lst")
    assert out.returncode == ExitCode.USAGE and "did you mean 'list' or 'ls'?" in out.stderr


# --- consistency --------------------------------------------------------------------------------


def test_json_where_it_was_missing(hub: LocalGitHub, tmp_path: Path) -> None:
    """`versions`, `hub list`, `lock`, `download`, `to-wheel`, `check-config` print one JSON
    document with --json (upload's is in tests/integration/test_cli_publishing.py)."""
    h = ["--hub", str(hub.root)]
    data = json.loads(run_cli("versions", REPO, "--json", *h).stdout)
    assert [r["revision"] for r in data["revisions"]] == ["v1"]
    data = json.loads(run_cli("hub", "list", "--json", *h).stdout)
    assert data == {"hub": str(hub.root), "repos": ["acme/demo", "acme/unversioned"]}
    data = json.loads(run_cli("hub", "list", REPO, "--json", *h).stdout)
    assert [(r["kind"], r["name"], r["variants"]) for r in data["refs"]] == [
        ("branch", "v1", [HOST]), ("tag", "v1.0.0", [HOST])]
    app = tmp_path / "app"
    app.mkdir()
    (app / "pyproject.toml").write_text('[project]\nname = "app"\nversion = "0"\n\n'
                                        f'[tool.kernels.dependencies]\n"{REPO}" = 1\n')
    locked = run_cli("lock", str(app), "--json", *h)
    data = json.loads(locked.stdout)
    assert [(x["repo_id"], x["variants"]) for x in data["locks"]] == [(REPO, [HOST])]
    assert data["written"] and locked.stderr == ""
    data = json.loads(run_cli("download", str(app), "--json", "--dest", str(tmp_path / "c"),
                              *h).stdout)
    assert [(d["repo_id"], d["variant"]) for d in data["downloaded"]] == [(REPO, HOST)]
    data = json.loads(run_cli("to-wheel", REPO, "--version", "1", "--json", "--dest",
                              str(tmp_path / "dist"), *h).stdout)
    assert [w["variant"] for w in data["wheels"]] == [HOST]
    assert Path(data["wheels"][0]["path"]).is_file()
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "build.toml").write_text('[general]\nname = "x"\nbackends = ["cpu"]\n'
                                    '[kernel.k]\nbackend = "cuda"\nsrc = []\n')
    out = run_cli("check-config", str(bad), "--json", "--no-check-sources")
    assert out.returncode == ExitCode.INVALID_INPUT
    data = json.loads(out.stdout)
    assert data["valid"] is False and data["problems"]


def test_verbose_after_the_command(hub: LocalGitHub) -> None:
    out = run_cli("hub", "list", "-v", "--hub", str(hub.root))
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["acme/demo", "acme/unversioned"]


def test_init_backends_does_not_swallow_the_name(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    out = run_cli("init", "--backends", "cpu", "acme/luma", "--no-git")
    assert out.returncode == 0, out.stderr
    assert "Initialized acme/luma (img2gray; backends: cpu)" in out.stdout
    assert (tmp_path / "luma" / "build.toml").is_file()
    assert not (tmp_path / "luma" / "luma_cuda").exists()
    out = run_cli("init", "--backends", "cpu,cuda", "acme/both", "--no-git")
    assert out.returncode == 0 and "backends: cpu, cuda" in out.stdout
    # the old spelling would now create a directory named after a backend: refused, explained
    out = run_cli("init", "--backends", "cpu", "cuda", "--no-git")
    assert out.returncode == ExitCode.USAGE and "--backends cpu,cuda" in out.stderr
    assert not (tmp_path / "cuda").exists()


def test_no_python_reprs(tmp_path: Path) -> None:
    """A list in a message is words, not `['cuda']`."""
    project = tmp_path / "p"
    project.mkdir()
    (project / "build.toml").write_text('[general]\nname = "x"\nbackends = ["cpu"]\n'
                                        '[kernel.k]\nbackend = "cuda"\nsrc = []\n')
    out = run_cli("check-config", str(project), "--no-check-sources")
    assert out.returncode == ExitCode.INVALID_INPUT
    assert "general.backends (cpu)" in out.stderr and "['cpu']" not in out.stderr


def test_the_build_bar_never_shows_minus_one() -> None:
    """On a terminal the bar of a variant being configured (ninja's `[0/1] cmake`) reads 0/1."""
    pytest.importorskip("rich")
    from kernelkit.builder.compile.events import BuildEvent
    from kernelkit.builder.compile.progress import Step
    from kernelkit.cli.render_build import RichRenderer

    screen = io.StringIO()
    bar = RichRenderer(file=screen, force_terminal=True, width=160)
    bar(BuildEvent("start", HOST, ""))
    bar(BuildEvent("progress", HOST, "cmake", step=Step(0, 1, "cmake", 0.5, None)))
    bar.progress.refresh()
    bar(BuildEvent("progress", HOST, "x.cpp", step=Step(3, 7, "x.cpp", 2.0, 1.0)))
    bar.progress.refresh()
    bar.close()
    shown = screen.getvalue()
    assert "-1/1" not in shown and "0/1" in shown and "3/7" in shown


def test_one_variant_is_singular(hub: LocalGitHub, tmp_path: Path) -> None:
    app = tmp_path / "app"
    app.mkdir()
    (app / "pyproject.toml").write_text('[project]\nname = "app"\nversion = "0"\n\n'
                                        f'[tool.kernels.dependencies]\n"{REPO}" = 1\n')
    out = run_cli("lock", str(app), "--hub", str(hub.root))
    assert out.returncode == 0, out.stderr
    assert "(1 variant, updated)" in out.stderr and "1 variants" not in out.stderr


def test_variants_defaults_like_info_and_speaks_cli(hub: LocalGitHub) -> None:
    """`variants` of a repository without version branches shows main (as `info`); a bad
    --version is refused in command-line words, not `version=<major>`."""
    out = run_cli("variants", "acme/unversioned", "--json", "--hub", str(hub.root))
    assert out.returncode == 0, out.stderr
    assert [r["revision"] for r in json.loads(out.stdout)["revisions"]] == ["main"]
    info = json.loads(run_cli("info", "acme/unversioned", "--json", "--hub",
                              str(hub.root)).stdout)
    assert info["revision"] == "main"
    out = run_cli("variants", REPO, "--version", "abc", "--hub", str(hub.root))
    assert out.returncode == ExitCode.USAGE
    assert "--version 1" in out.stderr and "version=" not in out.stderr
