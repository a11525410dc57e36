"""A GitHub Actions workflow that builds a kernel's variants on many runners.

Pure: build targets (``kernelkit.variants.matrix.targets_for``) and options in, YAML text out.
The workflow has

* ``build``: a matrix job, one job per variant (``kernelkit build --variant NAME``) or per
  shard (``kernelkit build --all --shard K/N``), each uploading its ``build/`` as an artifact
  ``build-<variant>`` / ``build-shard-<K>``; each job keeps its compiler cache (ccache) and
  configure cache (with CMake's compiler identification) in ``actions/cache``, so a rebuild of
  an unchanged or slightly changed project hits instead of compiling from nothing (and the
  repository secret ``KERNELKIT_CCACHE_REMOTE``, when set, shares the compiler cache with
  every runner and developer through ccache's remote storage);
* ``merge``: downloads every ``build-*`` artifact, ``kernelkit merge`` s them into ``build/``,
  runs ``kernelkit check`` with torch installed (the newest CPU torch of the matrix, so the
  import checks run) and uploads the merged tree as the artifact ``kernels``;
* ``test``: one job per variant a hosted runner can load (the CPU variants, each with its own
  torch): ``kernelkit check`` of the variant, then ``kernelkit test --variant`` (the project's
  ``tests/`` against it);
* ``upload`` (optional): on a push of a ``v*`` tag or a manual run, ``kernelkit upload``; a
  pushed tag ``v1.2.0`` becomes ``--tag v1.2.0``; it can sign first (``sign``): ``key`` signs
  with the Ed25519 key in the repository secret ``KERNELKIT_SIGNING_KEY`` (``kernelkit upload
  --sign``), ``sigstore`` signs each ``metadata.json`` keyless with the workflow's GitHub
  identity (``metadata.json.sigstore``, upstream's format; the job gets ``id-token: write``).

Each job installs what it runs (:data:`EXTRAS`: ``build`` where a job builds or checks, ``hf``
where it uploads to the Hugging Face Hub), unless ``--install`` replaces the install command.
``tests/unit/test_ci_github.py`` lints every shape with actionlint and runs each job's
commands in a real shell with recording stand-ins for ``pip`` and ``kernelkit``.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from kernelkit.errors import KernelkitError
from kernelkit.variants.matrix import BuildTarget

# GitHub-hosted runners per system; a system without one needs --runner SYSTEM=LABEL.
DEFAULT_RUNNERS = {"x86_64-linux": "ubuntu-latest", "aarch64-linux": "ubuntu-24.04-arm"}
#: the kernelkit extras each command needs (``upload`` to ``hf`` adds ``hf``)
EXTRAS = {"build": ("build",), "check": ("build",), "merge": (), "test": (), "upload": ()}
MERGED_ARTIFACT = "kernels"
_PLAIN = re.compile(r"^[A-Za-z0-9_./+-]+$")


@dataclass(frozen=True)
class WorkflowOptions:
    """What the workflow does besides the targets themselves."""

    shards: int | None = None  # None: one job per variant
    upload: bool = False
    project_dir: str = "."  # the kernel project, relative to the repository root
    install: str | None = None  # one install command for every job (None: each job's own)
    kernelkit: str = "kernelkit"  # the requirement each job installs, with its extras
    test: bool = True  # the test job (CPU variants on hosted runners)
    python_version: str = "3.12"
    hub: str = "hf"  # `kernelkit upload --hub`
    token_secret: str = "HF_TOKEN"  # the repository secret holding the hub token
    runners: tuple[tuple[str, str], ...] = tuple(DEFAULT_RUNNERS.items())
    name: str = "kernels"
    sign: tuple[str, ...] = ()  # "key" and/or "sigstore" (needs upload)
    signing_key_secret: str = "KERNELKIT_SIGNING_KEY"


SIGN_MODES = ("key", "sigstore")


def render_workflow(targets: Sequence[BuildTarget], options: WorkflowOptions) -> str:
    """The workflow file's text for ``targets`` (all of one project)."""
    if not targets:
        raise KernelkitError("no variants to build: the manifest selects none of the matrix",
                             hint="check [general] backends and the torch/cuda bounds in "
                                  "build.toml (`kernelkit list-variants`)")
    if options.shards is not None and not 1 <= options.shards <= 256:
        raise KernelkitError(f"--shards {options.shards}: expected a number from 1 to 256")
    bad = [m for m in options.sign if m not in SIGN_MODES]
    if bad or (options.sign and not options.upload):
        raise KernelkitError(f"--sign {', '.join(bad or options.sign)}: "
                             + ("expected key or sigstore" if bad else "signing happens in the "
                                "upload job"), hint="pass --upload with --sign key|sigstore")
    tested = tested_variants(targets, options) if options.test else []
    parts = [_header(options), _build_job(targets, options),
             _merge_job(options, _newest_cpu_torch(targets))]
    if tested:
        parts.append(_test_job(tested, options))
    if options.upload:
        parts.append(_upload_job(options, after=["merge", "test"] if tested else ["merge"]))
    return "\n".join(parts)


def requirement(spec: str, extras: Sequence[str]) -> str:
    """``spec`` (``kernelkit``, ``kernelkit==0.2``, ``kernelkit @ git+https://…``) with
    ``extras`` added (``kernelkit[build,hf]==0.2``)."""
    if not extras:
        return spec
    m = re.match(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?(.*)$", spec)
    if m is None:
        raise KernelkitError(f"--kernelkit {spec!r}: not a requirement",
                             hint="e.g. kernelkit, kernelkit==0.2.0 or 'kernelkit @ git+URL'")
    have = [e.strip() for e in (m.group(2) or "[]")[1:-1].split(",") if e.strip()]
    merged = ",".join(dict.fromkeys([*have, *extras]))
    return f"{m.group(1)}[{merged}]{m.group(3)}"


def _install(o: WorkflowOptions, extras: Sequence[str], *more: str) -> str:
    if o.install is not None:
        return o.install
    return " ".join(["python -m pip install", shlex.quote(requirement(o.kernelkit, extras)),
                     *more])


def _torch_install(torch: str, index: str | None) -> str:
    """The pinned torch (a CPU wheel) from its index."""
    where = f" --index-url {shlex.quote(index)}" if index else ""
    return f"python -m pip install {shlex.quote('torch==' + torch)}{where}"


def _newest_cpu_torch(targets: Sequence[BuildTarget]) -> BuildTarget | None:
    """The merge job's torch (an x86_64 CPU pin): the newest of the matrix."""
    cpu = [t for t in targets if t.backend == "cpu" and t.pin is not None
           and t.system == "x86_64-linux"]
    return max(cpu, key=lambda t: tuple(int(x) for x in t.torch.split(".")), default=None)


def tested_variants(targets: Sequence[BuildTarget], o: WorkflowOptions) -> list[BuildTarget]:
    """The variants a hosted runner can load: CPU builds with a pinned torch."""
    runners = dict(o.runners)
    return [t for t in targets if t.backend == "cpu" and t.kind == "arch" and t.pin is not None
            and t.system in runners]


def _q(value: str) -> str:
    """A YAML scalar: plain when unambiguous, else double-quoted (JSON is valid YAML)."""
    plain = _PLAIN.match(value) and value[0] not in "-+." and not value[0].isdigit()
    return value if plain else json.dumps(value)


def _header(o: WorkflowOptions) -> str:
    return f"""\
# Generated by `kernelkit ci github`; regenerate it rather than editing by hand.
name: {_q(o.name)}

on:
  push:
    branches: [main]
    tags: ["v*"]
  pull_request:
  workflow_dispatch:

permissions:
  contents: read

concurrency:
  group: ${{{{ github.workflow }}}}-${{{{ github.ref }}}}
  cancel-in-progress: true

jobs:"""


def _setup_steps(o: WorkflowOptions, extras: Sequence[str], *more: str) -> str:
    """Checkout, Python, and kernelkit with ``extras`` (then each of ``more``)."""
    installs = "".join(f"\n      - name: Install\n        run: {_q(cmd)}" for cmd in more)
    return f"""\
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: {json.dumps(o.python_version)}
      - name: Install kernelkit
        run: {_q(_install(o, extras))}{installs}"""


def _runner(system: str, o: WorkflowOptions) -> str:
    runners = dict(o.runners)
    if system not in runners:
        raise KernelkitError(f"no GitHub runner known for system {system}",
                             hint=f"pass --runner {system}=LABEL (a self-hosted runner label)")
    return runners[system]


def _matrix(targets: Sequence[BuildTarget], o: WorkflowOptions) -> tuple[str, str, str, str]:
    """(matrix YAML, job name, build command, artifact name) for per-variant or per-shard.

    Shards are per system: each runner builds its slice of what its system can build."""
    if o.shards is not None:
        systems = sorted({t.system for t in targets})
        rows = [f"          - system: {_q(system)}\n            shard: {k}\n"
                f"            runner: {_q(_runner(system, o))}"
                for system in systems for k in range(1, o.shards + 1)]
        return ("        include:\n" + "\n".join(rows),
                "build ${{ matrix.system }} shard ${{ matrix.shard }}/" + str(o.shards),
                f"kernelkit build --all --shard ${{{{ matrix.shard }}}}/{o.shards}",
                "build-${{ matrix.system }}-shard-${{ matrix.shard }}")
    rows = [f"          - variant: {_q(t.variant)}\n            runner: {_q(_runner(t.system, o))}"
            for t in targets]
    return ("        include:\n" + "\n".join(rows), "build ${{ matrix.variant }}",
            'kernelkit build --variant "${{ matrix.variant }}"', "build-${{ matrix.variant }}")


def _build_job(targets: Sequence[BuildTarget], o: WorkflowOptions) -> str:
    matrix, name, command, artifact = _matrix(targets, o)
    return f"""\
  build:
    name: {_q(name)}
    runs-on: ${{{{ matrix.runner }}}}
    timeout-minutes: 360
    strategy:
      fail-fast: false
      matrix:
{matrix}
    steps:
{_setup_steps(o, EXTRAS["build"])}
      - uses: actions/cache@v4
        with:
          path: ${{{{ runner.temp }}}}/kernelkit-cache
          key: {_q(f"kernelkit-{artifact}-${{{{ github.sha }}}}")}
          restore-keys: {_q(f"kernelkit-{artifact}-")}
      - name: Build
        working-directory: {_q(o.project_dir)}
        env:
          KERNELKIT_CCACHE_DIR: ${{{{ runner.temp }}}}/kernelkit-cache/ccache
          KERNELKIT_CONFIGURE_CACHE: ${{{{ runner.temp }}}}/kernelkit-cache/configure
          KERNELKIT_CCACHE_REMOTE: ${{{{ secrets.KERNELKIT_CCACHE_REMOTE }}}}
        run: {_q(command)}
      - uses: actions/upload-artifact@v4
        with:
          name: {_q(artifact)}
          path: {_q(_join(o.project_dir, "build/"))}
          if-no-files-found: error
          retention-days: 7
"""


def _merge_job(o: WorkflowOptions, torch: BuildTarget | None) -> str:
    build = _join(o.project_dir, "build")
    more = [_torch_install(torch.pin.torch, torch.pin.index_url)] \
        if torch is not None and torch.pin is not None else []
    return f"""\
  merge:
    needs: build
    runs-on: ubuntu-latest
    steps:
{_setup_steps(o, EXTRAS["check"], *more)}
      - uses: actions/download-artifact@v4
        with:
          pattern: build-*
          path: shards
      - name: Merge the shards
        run: {_q(f"kernelkit merge {shlex.quote(build)} shards/*")}
      - name: Check
        run: {_q(f"kernelkit check {shlex.quote(o.project_dir)}")}
      - uses: actions/upload-artifact@v4
        with:
          name: {MERGED_ARTIFACT}
          path: {_q(build + "/")}
          if-no-files-found: error
"""


def _test_job(tested: Sequence[BuildTarget], o: WorkflowOptions) -> str:
    rows = []
    for t in tested:
        assert t.pin is not None
        rows.append(f"          - variant: {_q(t.variant)}\n            runner: "
                    f"{_q(_runner(t.system, o))}\n            torch: {_q(t.pin.torch)}\n"
                    f"            index: {_q(t.pin.index_url or 'https://pypi.org/simple')}")
    build = _join(o.project_dir, "build")
    torch = 'python -m pip install "torch==${{ matrix.torch }}" --index-url "${{ matrix.index }}"'
    check = f"kernelkit check {shlex.quote(build)}/" + '"${{ matrix.variant }}"'
    test = f"kernelkit test {shlex.quote(o.project_dir)} " + '--variant "${{ matrix.variant }}"'
    return f"""\
  test:
    name: test ${{{{ matrix.variant }}}}
    needs: merge
    runs-on: ${{{{ matrix.runner }}}}
    strategy:
      fail-fast: false
      matrix:
        include:
{chr(10).join(rows)}
    steps:
{_setup_steps(o, EXTRAS["check"], "python -m pip install pytest", torch)}
      - uses: actions/download-artifact@v4
        with:
          name: {MERGED_ARTIFACT}
          path: {_q(build)}
      - name: Check the variant
        run: {_q(check)}
      - name: Test the variant
        run: {_q(test)}
"""


def _upload_job(o: WorkflowOptions, *, after: Sequence[str]) -> str:
    extras = ("hf",) if o.hub == "hf" or o.hub.startswith("hf://") else ()
    upload = f"kernelkit upload {shlex.quote(o.project_dir)} --hub {shlex.quote(o.hub)}"
    needs = after[0] if len(after) == 1 else "[" + ", ".join(after) + "]"
    key_env = ""
    if "key" in o.sign:
        upload += " --sign"
        key_env = f"\n          KERNELKIT_SIGNING_KEY: ${{{{ secrets.{o.signing_key_secret} }}}}"
    permissions = ("    permissions:\n      contents: read\n      id-token: write\n"
                   if "sigstore" in o.sign else "")
    return f"""\
  upload:
    needs: {needs}
    if: github.event_name == 'workflow_dispatch' || startsWith(github.ref, 'refs/tags/v')
    runs-on: ubuntu-latest
{permissions}    steps:
{_setup_steps(o, extras)}
      - uses: actions/download-artifact@v4
        with:
          name: {MERGED_ARTIFACT}
          path: {_q(_join(o.project_dir, "build"))}
{_sign_steps(o)}      - name: Upload
        shell: bash
        env:
          HF_TOKEN: ${{{{ secrets.{o.token_secret} }}}}{key_env}
        # a pushed tag v1.2.0 is the release tag of the upload
        run: |
          set --
          if [ "$GITHUB_REF_TYPE" = tag ]; then set -- --tag "$GITHUB_REF_NAME"; fi
          {upload} "$@"
"""


def _sign_steps(o: WorkflowOptions) -> str:
    """Install the signing tools; sign keyless with sigstore (the key signs in the upload)."""
    if not o.sign:
        return ""
    tools = " ".join(p for m, p in (("key", "cryptography"), ("sigstore", "sigstore"))
                     if m in o.sign)
    out = f"""\
      - name: Install the signing tools
        run: {_q(f"python -m pip install {tools}")}
"""
    if "sigstore" in o.sign:
        pattern = shlex.quote(_join(o.project_dir, "build")) + "/*/metadata.json"
        loop = (f"for m in {pattern}; do python -m sigstore sign --overwrite "
                '--bundle "$m.sigstore" "$m"; done')
        out += f"""\
      - name: Sign keyless (sigstore, this workflow's GitHub identity)
        run: {_q(loop)}
"""
    return out


def _join(project_dir: str, rel: str) -> str:
    base = project_dir.strip("/")
    return rel if base in ("", ".") else f"{base}/{rel}"
