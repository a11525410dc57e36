"""Issue 27 item 2, publishing that cannot surprise: what ``upload`` says without ``--tag``
(and that its advice works), a ``main`` branch with a card for every repository (read by the
real ``huggingface_hub`` and ``hf download`` from a real ``kernelkit serve``), a card whose
usage line loads the kernel (run for real in a fresh interpreter), no HTTP log lines without
``-v``, and ``hub rm-version``/``retag``/``ls --json`` on a hub directory, a git remote and
the Hub API (``kernelkit serve``), all or nothing where the hub can."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from kernelkit.errors import ExitCode, PublishRaceError
from kernelkit.hub import open_hub
from kernelkit.hub.local import LocalGitHub
from kernelkit.hub.port import Hub
from kernelkit.variants.host import detect_system
from tests.helpers import make_variant, run_cli
from tests.hubserver import READ_TOKEN, WRITE_TOKEN, HubServer, run_server

REPO = "acme/demo"
HOST = detect_system().arch_variant() or "torch-cpu"
SRC = str(Path(__file__).resolve().parents[2] / "src")


def build_tree(tmp: Path, *, version: int = 1, factor: float = 2.0) -> Path:
    """A project directory (build.toml, no CARD.md) with one sealed variant of this
    machine."""
    project = tmp / f"p-{uuid.uuid4().hex[:8]}"
    make_variant(project / "build", HOST, version=version, factor=factor,
                 uid=uuid.uuid4().hex[:7])
    (project / "build.toml").write_text('[general]\nname = "demo"\nbackends = ["cpu"]\n'
                                        'license = "Apache-2.0"\n')
    return project


def run_python(code: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**env, "PYTHONPATH": SRC}, cwd=cwd, timeout=300)


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HubServer]:
    pytest.importorskip("huggingface_hub")
    pytest.importorskip("uvicorn")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    with run_server(tmp_path / "served", tmp_path) as srv:
        monkeypatch.setenv("HF_ENDPOINT", srv.url)
        monkeypatch.setenv("HF_TOKEN", WRITE_TOKEN)
        yield srv


# --- upload without --tag -------------------------------------------------------------------


def test_upload_without_a_tag_says_so_and_its_advice_works(tmp_path: Path) -> None:
    hub = tmp_path / "hub"
    out = run_cli("upload", str(build_tree(tmp_path)), "--repo-id", REPO, "--hub", str(hub))
    assert out.returncode == 0, out.stderr
    assert f"hub:      {hub}\n" in out.stdout and "LocalGitHub(" not in out.stdout
    assert "tag:      (none)" in out.stdout
    assert "no release tag" in out.stderr and "'>=1.0' only see tagged releases" in out.stderr
    advice = re.search(r"`(kernelkit hub retag [^`]+)`", out.stderr)
    assert advice is not None and "v1.0.0" in advice.group(1)
    done = run_cli(*advice.group(1).split()[1:])
    assert done.returncode == 0, done.stderr
    info = json.loads(run_cli("info", REPO, "--version", ">=1.0", "--json", "--hub",
                              str(hub)).stdout)
    assert info["revision"] == "v1.0.0"  # the specifier sees the build now
    # a second build of v1: the note proposes the next patch release
    out = run_cli("upload", str(build_tree(tmp_path, factor=3.0)), "--repo-id", REPO, "--hub",
                  str(hub), "--json")
    data = json.loads(out.stdout)
    assert data["tag"] is None and "--tag v1.0.1" in data["notes"][0]
    assert data["hub"] == str(hub) and data["status"] == "uploaded"
    # with a tag: nothing to say
    out = run_cli("upload", str(build_tree(tmp_path, factor=4.0)), "--repo-id", REPO, "--hub",
                  str(hub), "--tag", "v1.0.2")
    assert out.returncode == 0 and "no release tag" not in out.stderr


def test_output_json_is_a_deprecated_alias_of_json(tmp_path: Path) -> None:
    project = build_tree(tmp_path)
    target = tmp_path / "result.json"
    out = run_cli("upload", str(project), "--repo-id", REPO, "--hub", str(tmp_path / "hub"),
                  "--tag", "v1.0.0", "--output-json", str(target))
    assert out.returncode == 0 and "--output-json is deprecated: use --json" in out.stderr
    again = run_cli("upload", str(project), "--repo-id", REPO, "--hub", str(tmp_path / "hub"),
                    "--tag", "v1.0.0", "--json")
    first, second = json.loads(target.read_text()), json.loads(again.stdout)
    assert set(first) == set(second) and second["status"] == "no_changes"


# --- main with a card; cards whose usage line loads -------------------------------------------


def test_every_repository_has_main_for_hub_clients(server: HubServer, tmp_path: Path) -> None:
    """No CARD.md: huggingface_hub's repo_info(..., repo_type="kernel") and `hf download`
    used to fail with "Revision main not found"."""
    from huggingface_hub import HfApi

    out = run_cli("upload", str(build_tree(tmp_path)), "--repo-id", REPO, "--hub", "hf",
                  "--tag", "v1.0.0")
    assert out.returncode == 0, out.stderr
    api = HfApi(endpoint=server.url, token=WRITE_TOKEN)
    info = api.repo_info(REPO, repo_type="kernel")
    assert info.sha == LocalGitHub(server.hub_dir).resolve(REPO, "main")
    hf = shutil.which("hf", path=str(Path(sys.executable).parent))
    assert hf is not None
    proc = subprocess.run([hf, "download", REPO, "--repo-type", "kernel", "--local-dir",
                           str(tmp_path / "dl")], capture_output=True, text=True,
                          env=server.env(), timeout=300)
    assert proc.returncode == 0, proc.stderr
    card = (tmp_path / "dl" / "README.md").read_text()
    assert "library_name: kernels" in card
    assert f'kernelkit.get_kernel("{REPO}", version=1, trust_remote_code=True)' in card


def _card_line(card: str) -> str:
    line = next(x for x in card.splitlines() if "get_kernel(" in x and "=" in x.split("(")[0])
    return line.strip()


@pytest.mark.parametrize("with_card", [True, False], ids=["init's CARD.md", "generated"])
def test_the_cards_usage_line_loads_the_kernel(tmp_path: Path, with_card: bool) -> None:
    """The line a reader copies from README.md on main, run in a fresh interpreter against
    the hub: it loads (it used to raise TrustError for every org but kernels-community)."""
    project = build_tree(tmp_path)
    if with_card:
        assert run_cli("init", str(tmp_path / "scaffold"), "--name", REPO, "--no-git",
                       "--backends", "cpu").returncode == 0
        shutil.copy(tmp_path / "scaffold" / "CARD.md", project / "CARD.md")
    hub = LocalGitHub(tmp_path / "hub")
    assert run_cli("upload", str(project), "--repo-id", REPO, "--hub",
                   str(hub.root)).returncode == 0
    card = hub.read_file(REPO, hub.resolve(REPO, "main"), "README.md")
    assert card is not None
    assert ("Converts RGB" in card.decode()) == with_card  # init's card, or the generated one
    line = _card_line(card.decode())
    assert "trust_remote_code=True" in line
    env = {**os.environ, "KERNELKIT_HUB": str(hub.root), "KERNELKIT_CACHE": str(tmp_path / "c")}
    proc = run_python(f"import kernelkit\n{line}\nprint('loaded')", env, tmp_path)
    assert proc.returncode == 0 and "loaded" in proc.stdout, proc.stderr


def test_a_card_without_trust_is_flagged_at_upload(tmp_path: Path) -> None:
    project = build_tree(tmp_path)
    (project / "CARD.md").write_text(f'# demo\n\nk = kernelkit.get_kernel("{REPO}", version=1)\n')
    out = run_cli("upload", str(project), "--repo-id", REPO, "--hub", str(tmp_path / "hub"))
    assert out.returncode == 0
    assert "raises TrustError for its readers" in out.stderr
    assert f'kernelkit.get_kernel("{REPO}", version=1, trust_remote_code=True)' in out.stderr


def test_no_http_log_lines_without_verbose(server: HubServer, tmp_path: Path) -> None:
    project = build_tree(tmp_path)
    cmd = [sys.executable, "-m", "kernelkit", "upload", str(project), "--repo-id", REPO,
           "--hub", "hf", "--tag", "v1.0.0"]
    env = {**server.env(), "PYTHONPATH": SRC}
    quiet = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert quiet.returncode == 0, quiet.stderr
    assert "HTTP Request" not in quiet.stderr and "httpx" not in quiet.stderr
    loud = subprocess.run([*cmd, "-v"], capture_output=True, text=True, env=env, timeout=300)
    assert loud.returncode == 0 and "HTTP Request: " in loud.stderr


# --- hub ls / rm-version / retag on each kind of hub ----------------------------------------


def _three_kinds(tmp_path: Path, server: HubServer) -> dict[str, str]:
    return {"directory": str(tmp_path / "hub"), "git": f"git+file://{tmp_path / 'remote'}",
            "hf": "hf"}


@pytest.mark.parametrize("kind", ["directory", "git", "hf"])
def test_rm_version_retag_and_ls_json(kind: str, server: HubServer, tmp_path: Path) -> None:
    spec = _three_kinds(tmp_path, server)[kind]
    (tmp_path / "remote").mkdir()
    h = ["--hub", spec]
    for version, tag in ((1, "v1.0.0"), (1, "v1.1.0"), (2, "v2.0.0")):
        out = run_cli("upload", str(build_tree(tmp_path, version=version)), "--repo-id", REPO,
                      "--tag", tag, *h)
        assert out.returncode == 0, out.stderr

    def refs() -> dict[str, str]:
        data = json.loads(run_cli("hub", "ls", REPO, "--json", *h).stdout)
        return {f"{r['kind']} {r['name']}": r["commit"] for r in data["refs"]}

    before = refs()
    assert set(before) == {"branch main", "branch v1", "branch v2", "tag v1.0.0",
                           "tag v1.1.0", "tag v2.0.0"}
    # without --yes: the plan, nothing changed, exit 2
    out = run_cli("hub", "rm-version", REPO, "1", *h)
    assert out.returncode == ExitCode.USAGE and "would delete branch v1" in out.stdout
    assert refs() == before
    out = run_cli("hub", "rm-version", REPO, "1", "--yes", "--json", *h)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["applied"] is True
    after = refs()
    assert set(after) == {"branch main", "branch v2", "tag v2.0.0"}
    assert run_cli("info", REPO, "--version", "1", *h).returncode == ExitCode.NOT_FOUND
    # retag moves v2.0.0 to a new build of v2; a no-op the second time
    out = run_cli("upload", str(build_tree(tmp_path, version=2, factor=5.0)), "--repo-id",
                  REPO, *h)
    new = json.loads(run_cli("hub", "ls", REPO, "--json", *h).stdout)
    head = next(r["commit"] for r in new["refs"] if r["name"] == "v2")
    out = run_cli("hub", "retag", REPO, "v2.0.0", "v2", "--yes", *h)
    assert out.returncode == 0 and f"move tag v2.0.0 from {after['tag v2.0.0'][:12]}" in out.stdout
    assert refs()["tag v2.0.0"] == head
    assert run_cli("hub", "retag", REPO, "v2.0.0", "v2", "--yes", *h).stdout == \
        "nothing to change\n"
    # main and its card are never removed
    assert run_cli("hub", "rm-version", REPO, "main", "--yes", *h).returncode == ExitCode.USAGE


@pytest.mark.parametrize("kind", ["directory", "git", "hf"])
def test_ref_changes_are_all_or_nothing(kind: str, server: HubServer, tmp_path: Path) -> None:
    """A plan whose refs moved meanwhile changes nothing (one stale ref among good ones)."""
    from kernelkit.hub.admin import RefChange, apply_changes, plan_rm_version

    spec = _three_kinds(tmp_path, server)[kind]
    (tmp_path / "remote").mkdir()
    for tag in ("v1.0.0", "v1.1.0"):
        out = run_cli("upload", str(build_tree(tmp_path)), "--repo-id", REPO, "--tag", tag,
                      "--hub", spec)
        assert out.returncode == 0, out.stderr
    hub: Hub = open_hub(spec)
    plan = plan_rm_version(hub, REPO, "1")
    assert [c.name for c in plan] == ["v1.0.0", "v1.1.0", "v1"]
    stale = [*plan[:1], RefChange(plan[1].ref, "0" * 40, None), *plan[2:]]
    with pytest.raises(PublishRaceError):
        apply_changes(hub, REPO, stale, "test")
    fresh: Hub = open_hub(spec)
    assert set(fresh.list_refs(REPO).tags) == {"v1.0.0", "v1.1.0"}
    assert "v1" in fresh.list_refs(REPO).branches


def test_serve_deletes_refs_for_writers_only_and_never_main(server: HubServer,
                                                             tmp_path: Path) -> None:
    """The DELETE endpoints behind `hub rm-version`/`retag` on `kernelkit serve`, called by
    huggingface_hub itself: a read token may not, main (the card) may not go, an unknown tag
    is RevisionNotFound, a writer's delete takes the tag away."""
    from huggingface_hub import HfApi
    from huggingface_hub.errors import HfHubHTTPError, RevisionNotFoundError

    assert run_cli("upload", str(build_tree(tmp_path)), "--repo-id", REPO, "--hub", "hf",
                   "--tag", "v1.0.0").returncode == 0
    writer = HfApi(endpoint=server.url, token=WRITE_TOKEN)
    reader = HfApi(endpoint=server.url, token=READ_TOKEN)
    with pytest.raises(HfHubHTTPError) as refused:
        reader.delete_tag(REPO, tag="v1.0.0", repo_type="kernel")
    assert refused.value.response.status_code == 403
    with pytest.raises(HfHubHTTPError) as refused:
        writer.delete_branch(REPO, branch="main", repo_type="kernel")
    assert refused.value.response.status_code == 403
    with pytest.raises(RevisionNotFoundError):
        writer.delete_tag(REPO, tag="v9.9.9", repo_type="kernel")
    refs = writer.list_repo_refs(REPO, repo_type="kernel")
    assert {t.name for t in refs.tags} == {"v1.0.0"} and "main" in {b.name for b in refs.branches}
    writer.delete_tag(REPO, tag="v1.0.0", repo_type="kernel")
    assert writer.list_repo_refs(REPO, repo_type="kernel").tags == []
