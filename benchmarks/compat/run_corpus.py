"""Build, check and test every upstream example project with kernelkit; write JSON and a table.

For each project directory of the corpus (upstream's example projects, read-only), the runner
copies it to a scratch directory, commits it to a fresh git repository (builds record the git
tree id), and runs, each as a subprocess with a timeout:

1. ``kernelkit build --json`` (``--all`` with ``--all``: the pinned matrix),
2. ``kernelkit check --json`` on its ``build/``,
3. ``kernelkit test --json`` (the project's own ``tests/`` against each built variant that fits).

It records each step's status, exit code, duration, the per-variant outcomes (with the refusal
reason and whose limitation it is: unsupported / machine / project) and the last lines of the
logs. The result goes to ``benchmarks/results/compat/corpus_<device>.json`` and a markdown table
beside it. Stdlib and kernelkit only, so it runs on the GPU machine as it is::

    PYTHONPATH=src python3 benchmarks/compat/run_corpus.py --device-label h200 \\
        --corpus shared/upstream-examples

``KERNELKIT_CUDA_CAPABILITIES`` is passed through to the builds.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
TAIL_LINES = 15
MACHINE_REFUSAL = "is not buildable on this machine"
GIT_IDENT = ["-c", "user.name=corpus", "-c", "user.email=corpus@kernelkit.invalid"]


@dataclass
class Step:
    """One kernelkit command on one project."""

    name: str
    status: str  # ok | failed | timeout | skipped | refused (this machine cannot build it)
    returncode: int | None = None
    seconds: float = 0.0
    command: list[str] = field(default_factory=list)
    results: Any = None  # the command's --json output, where it printed one
    tail: list[str] = field(default_factory=list)  # last lines of stderr/stdout
    note: str = ""


@dataclass
class ProjectResult:
    name: str
    steps: list[Step] = field(default_factory=list)


def find_corpus(given: str | None) -> Path:
    if given:
        path = Path(given).resolve()
    else:
        candidates = [p / "shared" / "upstream-examples" for p in (ROOT, *ROOT.parents)]
        path = next((c for c in candidates if c.is_dir()), candidates[0])
    if not path.is_dir():
        sys.exit(f"error: corpus {path} is not a directory (pass --corpus PATH)")
    return path


def projects(corpus: Path, only: list[str]) -> list[Path]:
    found = sorted(p for p in corpus.iterdir() if (p / "build.toml").is_file())
    if only:
        found = [p for p in found if p.name in only]
        missing = set(only) - {p.name for p in found}
        if missing:
            sys.exit(f"error: no such project(s) in {corpus}: {', '.join(sorted(missing))}")
    return found


def committed_copy(src: Path, scratch: Path) -> Path:
    dest = scratch / src.name
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns("build", "__pycache__"))
    subprocess.run(["git", "init", "-q", str(dest)], check=True)
    subprocess.run(["git", "-C", str(dest), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(dest), *GIT_IDENT, "commit", "-qm", "import"], check=True)
    return dest


def child_env() -> dict[str, str]:
    import kernelkit

    src = str(Path(kernelkit.__file__).resolve().parents[1])
    env = {k: v for k, v in os.environ.items() if k not in ("LOCAL_KERNELS", "KERNELKIT_HUB")}
    env["PYTHONPATH"] = os.pathsep.join(x for x in (src, env.get("PYTHONPATH", "")) if x)
    return env


def tail(text: str, n: int = TAIL_LINES) -> list[str]:
    return [line[:400] for line in text.strip().splitlines()[-n:]]


def log_tail(path: str | None, n: int = TAIL_LINES) -> list[str]:
    if not path or not Path(path).is_file():
        return []
    return tail(Path(path).read_text(errors="replace"), n)


def kk(name: str, args: list[str], timeout: float, cwd: Path,
       extra_env: dict[str, str] | None = None) -> Step:
    cmd = [sys.executable, "-m", "kernelkit", *args]
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True,
                              env={**child_env(), **(extra_env or {})}, cwd=cwd, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        out = (exc.stderr or b"") if isinstance(exc.stderr, bytes) else (exc.stderr or "")
        text = out.decode(errors="replace") if isinstance(out, bytes) else out
        return Step(name, "timeout", None, round(time.monotonic() - start, 1), cmd,
                    tail=tail(text), note=f"timed out after {timeout:.0f} s")
    step = Step(name, "ok" if proc.returncode == 0 else "failed", proc.returncode,
                round(time.monotonic() - start, 1), cmd)
    try:
        step.results = json.loads(proc.stdout) if proc.stdout.strip() else None
    except json.JSONDecodeError:
        step.tail = tail(proc.stdout)
    step.tail += tail(proc.stderr)
    return step


def add_log_tails(step: Step) -> None:
    """Attach the last log lines of each failed variant (build and test report log paths)."""
    if not isinstance(step.results, list):
        return
    for r in step.results:
        if isinstance(r, dict) and r.get("status") == "failed":
            r["log-tail"] = log_tail(r.get("log"))


def built_variants(build_dir: Path) -> list[str]:
    if not build_dir.is_dir():
        return []
    return sorted(p.name for p in build_dir.iterdir() if (p / "metadata.json").is_file())


def build_and_check(src: Path, scratch: Path, opts: argparse.Namespace) -> ProjectResult:
    result = ProjectResult(src.name)
    project = committed_copy(src, scratch)
    build_args = ["build", "--json", *(["--all"] if opts.all else []), str(project)]
    build = kk("build", build_args, opts.timeout, scratch)
    add_log_tails(build)
    if build.status == "failed" and any(MACHINE_REFUSAL in line for line in build.tail):
        build.status = "refused"  # no backend of the project is one this torch has
    result.steps.append(build)
    if not built_variants(project / "build"):
        result.steps.append(Step("check", "skipped", note="no variant was built"))
        return result
    result.steps.append(kk("check", ["check", "--json", str(project / "build")],
                           opts.timeout, scratch))
    return result


def run_tests(result: ProjectResult, project: Path, local_kernels: str,
              opts: argparse.Namespace) -> None:
    """``kernelkit test`` with ``LOCAL_KERNELS`` naming every built project of the corpus, as
    upstream's CI does for suites that load two kernels (symbol-conflicts2)."""
    if not built_variants(project / "build"):
        result.steps.append(Step("test", "skipped", note="no variant was built"))
        return
    if not (project / "tests").is_dir():
        result.steps.append(Step("test", "skipped", note="the project has no tests/"))
        return
    test = kk("test", ["test", "--json", str(project)], opts.timeout, project.parent,
              {"LOCAL_KERNELS": local_kernels} if local_kernels else None)
    add_log_tails(test)
    if test.status == "ok" and isinstance(test.results, list) and not any(
            r.get("status") == "passed" for r in test.results):
        test.status = "skipped"
        test.note = "no built variant could be tested on this machine"
    result.steps.append(test)


def local_kernels_of(built: list[Path]) -> str:
    """``repo-id=dir:...`` for each project with a ``general.hub.repo-id``."""
    from kernelkit.errors import KernelkitError
    from kernelkit.manifest import load_manifest

    entries = []
    for project in built:
        try:
            repo_id = load_manifest(project, check_sources=False).general.hub.repo_id
        except KernelkitError:  # a project whose manifest is wrong gets no entry
            continue
        if repo_id:
            entries.append(f"{repo_id}={project}")
    return ":".join(entries)


def device_info(label: str) -> dict[str, Any]:
    info: dict[str, Any] = {"label": label, "machine": platform.machine(),
                            "python": platform.python_version(), "cpus": os.cpu_count()}
    try:
        import torch

        info["torch"] = torch.__version__
        if torch.cuda.is_available():
            info["gpu"] = torch.cuda.get_device_name(0)
    except ImportError:
        info["torch"] = None
    info["cuda-capabilities"] = os.environ.get("KERNELKIT_CUDA_CAPABILITIES")
    return info


# ---- markdown -------------------------------------------------------------------------------

def variant_summary(step: Step) -> str:
    if not isinstance(step.results, list):
        return ""
    parts = []
    for r in step.results:
        if not isinstance(r, dict):
            continue
        who = f" [{r['who']}]" if r.get("who") else ""
        parts.append(f"{r.get('variant')}: {r.get('status')}{who}")
    return "; ".join(parts)


def why(step: Step) -> str:
    """The first reason a step did not pass (refusal, check finding, test log or stderr)."""
    if step.note:
        return step.note
    if isinstance(step.results, list):
        for r in step.results:
            if isinstance(r, dict) and r.get("status") in ("failed", "skipped"):
                reason = r.get("message") or r.get("reason") or ""
                who = f" ({r['who']})" if r.get("who") else ""
                return f"{r.get('variant')}: {reason}{who}"
    if isinstance(step.results, dict):
        for f in step.results.get("findings", []):
            if f.get("severity") == "error":
                return f"{f.get('variant')}: {f.get('code')}: {f.get('message')}"
    errors = [line for line in step.tail if line.startswith("error:")]
    return (errors or step.tail or [""])[-1]


def cell(step: Step) -> str:
    mark = {"ok": "pass", "failed": "FAIL", "timeout": "TIMEOUT", "skipped": "skip",
            "refused": "refused (machine)"}[step.status]
    return f"{mark} ({step.seconds:.0f} s)" if step.status not in ("skipped", "refused") else mark


def render_markdown(data: dict[str, Any]) -> str:
    dev = data["device"]
    lines = [f"# kernelkit on upstream's examples: {dev['label']}", "",
             f"torch {dev.get('torch')}, Python {dev['python']}, {dev['cpus']} CPUs"
             + (f", GPU {dev['gpu']}" if dev.get("gpu") else "")
             + (f", KERNELKIT_CUDA_CAPABILITIES={dev['cuda-capabilities']}"
                if dev.get("cuda-capabilities") else ""), "",
             f"Command: `{data['command']}`", "",
             "| project | build | check | own tests | variants | reason (first) |",
             "| --- | --- | --- | --- | --- | --- |"]
    for p in data["projects"]:
        steps = {s["name"]: Step(**s) for s in p["steps"]}
        reasons = [f"{n}: {why(s)}" for n, s in steps.items() if s.status != "ok" and why(s)]
        reason = reasons[0].replace("|", "\\|").replace("\n", " ")[:300] if reasons else ""
        lines.append(f"| {p['name']} | {cell(steps['build'])} | {cell(steps['check'])} | "
                     f"{cell(steps['test'])} | {variant_summary(steps['build'])} | {reason} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", help="directory of the example projects "
                    "(default: shared/upstream-examples in or above the checkout)")
    ap.add_argument("--device-label", default="cpu", help="names the result files (cpu, h200)")
    ap.add_argument("--all", action="store_true", help="build the pinned matrix (build --all)")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per step")
    ap.add_argument("--parallel", type=int, default=1, help="projects at once")
    ap.add_argument("--only", action="append", default=[], help="this project only (repeatable)")
    ap.add_argument("--out", type=Path, help="JSON result "
                    "(default: benchmarks/results/compat/corpus_<device>.json)")
    ap.add_argument("--keep", action="store_true", help="keep the scratch copies and builds")
    opts = ap.parse_args(argv)

    corpus = find_corpus(opts.corpus)
    default = ROOT / "benchmarks" / "results" / "compat" / f"corpus_{opts.device_label}.json"
    out = opts.out or default
    out.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="kk-corpus-"))
    todo = projects(corpus, opts.only)
    start = time.monotonic()
    try:
        with ThreadPoolExecutor(max(1, opts.parallel)) as pool:
            results = list(pool.map(lambda p: build_and_check(p, scratch, opts), todo))
            copies = [scratch / r.name for r in results]
            local = local_kernels_of([c for c in copies if built_variants(c / "build")])
            list(pool.map(lambda rc: run_tests(rc[0], rc[1], local, opts),
                          zip(results, copies, strict=True)))
        for r in results:
            print(f"{r.name}: " + ", ".join(f"{s.name} {s.status}" for s in r.steps),
                  file=sys.stderr, flush=True)
    finally:
        if not opts.keep:
            shutil.rmtree(scratch, ignore_errors=True)
    data = {"device": device_info(opts.device_label),
            "command": " ".join(["python3", "benchmarks/compat/run_corpus.py",
                                 *(argv or sys.argv[1:])]),
            "corpus": str(corpus), "seconds": round(time.monotonic() - start, 1),
            "projects": [{"name": r.name, "steps": [asdict(s) for s in r.steps]} for r in results]}
    data = json.loads(json.dumps(data).replace(str(scratch), "$SCRATCH"))
    if opts.keep:
        data["scratch"] = str(scratch)
    out.write_text(json.dumps(data, indent=2) + "\n")
    out.with_suffix(".md").write_text(render_markdown(data))
    print(f"wrote {out} and {out.with_suffix('.md')}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
