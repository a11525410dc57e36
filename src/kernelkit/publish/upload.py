"""``kernelkit upload``: publish a build tree to a hub (upstream-builder.md §7.1).

Plan, then act: :func:`plan_upload` reads and verifies the build tree and works out the repo id,
branch and the exact files (a value you can print and test); :func:`upload` publishes it.

Hub layout of a version branch: ``build/<variant>/...`` for every variant (and
``build/<variant>.kksig`` beside it when it is signed, ``kernelkit.signing``), ``benchmarks/
benchmark*.py`` from the project, ``benchmarks/results/<variant>/`` (``kernelkit benchmark
--save``; only results of the very build uploaded), and ``README.md`` from ``CARD.md``. The
project's sources (when given and the variants record their digest) go to the branch
``kernelkit-sources`` as ``sources/<hex>.tar.gz`` first, so no version names sources the hub
does not have (``kernelkit.artifact.sources`` says why not on the version branch). Uploaded
variants replace ``build/<variant>/`` wholly; on an existing branch the other variants stay
(upstream rule); a new branch holds only what is uploaded. ``main`` gets the same README.md.

Every repository has a ``main`` branch with a card (Hub clients such as ``huggingface_hub``'s
``repo_info`` and ``hf download`` ask for ``main`` by default): without a ``CARD.md``, an
upload to a repository whose ``main`` has no README.md publishes one made by
:func:`default_card` (name, versions, variants and a usage line that loads it, trust
included); an existing README.md on ``main`` is never replaced by a generated one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kernelkit.artifact.digest import variant_files
from kernelkit.artifact.layout import discover_variants
from kernelkit.artifact.metadata import Metadata, load_json, read_bytes
from kernelkit.artifact.sources import SOURCES_BRANCH, SourceArchive, record_of
from kernelkit.errors import (
    HubError,
    InputFileError,
    IntegrityError,
    KernelkitError,
    PublishRaceError,
)
from kernelkit.hub.names import SEMVER_TAG, VERSION_BRANCH, check_ref_name, check_repo_id
from kernelkit.hub.port import Hub
from kernelkit.signing.sigfile import hub_path
from kernelkit.util.inputs import MAX_TEXT_BYTES, MAX_TOML_BYTES, parse_toml, read_input_text

if TYPE_CHECKING:
    from kernelkit.signing.keys import SigningKey

DEFAULT_MESSAGE = "Uploaded using `kernelkit`."
_METADATA_FILES = ("metadata.json", "metadata.json.sigstore")


@dataclass(frozen=True)
class UploadPlan:
    repo_id: str
    branch: str
    variants: tuple[str, ...]
    files: dict[str, Path]  # repo path -> local file
    readme: Path | None  # README.md source (already rendered), also published to main
    version: int
    warnings: tuple[str, ...] = ()
    sources: SourceArchive | None = None  # to publish on SOURCES_BRANCH
    #: the generated card for ``main`` when the project has no CARD.md (only published where
    #: ``main`` has no README.md yet)
    default_readme: Path | None = None


@dataclass(frozen=True)
class UploadResult:
    repo_id: str
    branch: str
    commit: str
    tag: str | None
    variants: tuple[str, ...]
    changed: bool
    main_commit: str | None = None
    warnings: tuple[str, ...] = field(default=())
    #: ``(branch, pull request URL)`` for each branch a pull request was opened against
    pull_requests: tuple[tuple[str, str], ...] = ()
    sources: str | None = None  # the digest of the sources published with the variants


# --- planning ------------------------------------------------------------------------------


def _find_project(path: Path, build_root: Path) -> Path | None:
    for cand in (path, build_root.parent, path.parent):
        if (cand / "build.toml").is_file():
            return cand
    return None


def _read_hub_config(project: Path | None) -> dict[str, Any]:
    if project is None:
        return {}
    manifest = project / "build.toml"
    try:
        data = parse_toml(read_input_text(manifest, MAX_TOML_BYTES), manifest)
    except (OSError, InputFileError) as exc:
        reason = exc.message if isinstance(exc, InputFileError) else str(exc)
        raise KernelkitError(f"{manifest}: cannot read build.toml ({reason})",
                             hint="fix build.toml or pass --repo-id and --branch") from None
    general = data.get("general", {})
    hub = general.get("hub", {}) if isinstance(general, dict) else {}
    return {"license": general.get("license"), **(hub if isinstance(hub, dict) else {})}


def verify_variant(vdir: Path) -> Metadata:
    """Read ``metadata.json`` and check every file against its digest (``IntegrityError``)."""
    meta = Metadata.read(vdir / "metadata.json")
    if meta.digest is None:
        raise IntegrityError(vdir / "metadata.json", "a digest of the variant's files", "none",
                             hint="the variant is not sealed: rebuild it with `kernelkit build`")
    bad_meta = meta.digest.check_metadata(load_json(read_bytes(vdir / "metadata.json")))
    problems = ([bad_meta] if bad_meta else []) + meta.digest.verify(vdir)
    if problems:
        first = problems[0]
        listed = "; ".join(str(p) for p in problems[:5])
        raise IntegrityError(
            vdir / first.path, first.expected or "no such file", first.actual or "missing",
            hint=f"variant {vdir.name} does not match its metadata.json digest ({listed}); "
                 "nothing was published: rebuild the variant with `kernelkit build`",
        )
    return meta


def _choose_branch(branch: str | None, config: dict[str, Any], metas: dict[str, Metadata]) -> int:
    versions = {m.version for m in metas.values()}
    if len(versions) > 1 and not (branch or config.get("branch")):
        detail = ", ".join(f"{v}: version {m.version}" for v, m in metas.items())
        raise KernelkitError(f"found multiple versions in build variants ({detail})",
                             hint="rebuild every variant from one build.toml, or pass --branch")
    return max(versions)


def _card(project: Path | None, build_root: Path) -> Path | None:
    for cand in ([project / "CARD.md"] if project else []) + [build_root / "CARD.md"]:
        if cand.is_file():
            return cand
    return None


def render_card(text: str, values: dict[str, str]) -> str:
    """Fill ``{{ repo_id }}``-style placeholders whose name is in ``values``; keep the rest."""
    def sub(m: re.Match[str]) -> str:
        return values.get(m.group(1), m.group(0))
    return re.sub(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}", sub, text)


def plan_upload(path: Path, *, repo_id: str | None = None, branch: str | None = None,
                staging: Path, sources: SourceArchive | None = None) -> UploadPlan:
    """Discover and verify the variants under ``path``; the README is rendered into
    ``staging`` (a scratch directory the caller owns). ``sources``: the project's sources
    archive, published when the variants record its digest (:func:`sources_warnings`)."""
    tree = discover_variants(path)
    if tree is None:
        raise KernelkitError(f"no build variants found under {path} (looked in result/, build/ "
                             "and the directory itself)", hint="build the kernel first")
    project = _find_project(path, tree.root)
    config = _read_hub_config(project)
    repo_id = repo_id or config.get("repo-id")
    if not repo_id:
        raise KernelkitError("no repository id: pass --repo-id ORG/NAME or set "
                             f"[general.hub] repo-id in {project or path}/build.toml")
    check_repo_id(repo_id)
    metas = {v.name: verify_variant(v) for v in tree.variants}
    version = _choose_branch(branch, config, metas)
    branch = check_ref_name(branch or config.get("branch") or f"v{version}", "branch")
    files: dict[str, Path] = {}
    for vdir in tree.variants:
        for rel, p in variant_files(vdir):
            files[f"build/{vdir.name}/{rel}"] = p
        for name in _METADATA_FILES:
            if (vdir / name).is_file():
                files[f"build/{vdir.name}/{name}"] = vdir / name
        signature = _signature_file(vdir)
        if signature is not None:
            files[hub_path(vdir.name)] = signature
    stale: list[str] = []
    if project is not None and (project / "benchmarks").is_dir():
        for bench in sorted((project / "benchmarks").glob("benchmark*.py")):
            if bench.is_file():
                files[f"benchmarks/{bench.name}"] = bench
        for vdir in tree.variants:
            stale += _benchmark_results(project / RESULTS_DIR / vdir.name, vdir, files)
    readme = _stage_readme(project, tree.root, staging, repo_id, version, config)
    default_readme = None
    if readme is not None:
        files["README.md"] = readme
    else:
        default_readme = staging / "README.default.md"
        default_readme.write_text(default_card(repo_id, version, str(config.get("license") or ""),
                                               tuple(metas)), encoding="utf-8")
    trust = _card_without_trust(readme, repo_id, version)
    warnings = (*trust, *tuple(f"variant {v} was built from a dirty tree (uncommitted changes)"
                     for v, m in metas.items() if m.provenance and m.provenance.dirty) + tuple(
        f"{d}: benchmark results of another build of {Path(d).name}, not uploaded (run "
        "`kernelkit benchmark --save` again)" for d in stale))
    published = None
    if sources is not None:
        source_notes = sources_warnings(metas, sources)
        if len(source_notes) < len(metas):  # some variant names these sources
            published = sources
        warnings += tuple(source_notes)
    return UploadPlan(repo_id, branch, tuple(metas), files, readme, version, warnings,
                      published, default_readme)


def sources_warnings(metas: dict[str, Metadata], sources: SourceArchive) -> list[str]:
    """One note per variant that does not record ``sources``' digest (built from other
    sources, or by a kernelkit that did not record them): no build from source can use the
    archive for it."""
    notes = []
    for variant, meta in metas.items():
        record = record_of(meta.provenance.extra) if meta.provenance is not None else None
        if record is None:
            notes.append(f"variant {variant} records no sources (built by an older kernelkit "
                         "or another builder): rebuild it to let users build from source")
        elif record.digest != sources.digest:
            notes.append(f"variant {variant} was built from sources {record.digest[:19]}..., "
                         f"not the project's current ones ({sources.digest[:19]}...): rebuild "
                         "it, or its sources are not published")
    return notes


def default_card(repo_id: str, version: int, license: str, variants: tuple[str, ...]) -> str:
    """The README.md of ``main`` for a project without a CARD.md: front matter the Hub reads
    (``library_name: kernels``), what the repository holds and the line that loads it."""
    from kernelkit.util.usage import load_call

    name = repo_id.split("/", 1)[1]
    front = ["---", "library_name: kernels", *([f"license: {license}"] if license else []),
             "tags:", "  - kernel", "---"]
    listed = "\n".join(f"- `{v}`" for v in sorted(variants))
    return "\n".join(front) + f"""

# {name}

A kernel for PyTorch, published with kernelkit. Each version is a branch `v<N>` (release tags
`v<N>.<minor>.<patch>` name exact builds); this card was generated because the project has no
`CARD.md`.

## Usage

```python
import kernelkit

{name.replace("-", "_")} = {load_call(repo_id, version=version)}
```

## Variants of version {version}

{listed}
"""


def _card_without_trust(readme: Path | None, repo_id: str, version: int) -> tuple[str, ...]:
    """A warning when the card shows ``get_kernel("<repo_id>", ...)`` without
    ``trust_remote_code=True`` for a publisher that is not trusted by default: that line
    raises ``TrustError`` for everyone who copies it."""
    from kernelkit.util.usage import load_call, needs_trust

    if readme is None or not needs_trust(repo_id):
        return ()
    text = readme.read_text(encoding="utf-8", errors="replace")
    calls = re.findall(r"get_kernel\(\s*[\"']" + re.escape(repo_id) + r"[\"'][^)]*\)", text)
    if not calls or all("trust_remote_code" in c for c in calls):
        return ()
    warning = (f"the card's usage line `{calls[0]}` raises TrustError for its readers: "
               f"{repo_id.split('/')[0]} is not a trusted publisher by default; show "
               f"`{load_call(repo_id, version=version)}` in CARD.md")
    return (warning,)


RESULTS_DIR = "benchmarks/results"  # `kernelkit benchmark --save`: <dir>/<variant>/


def _signature_file(vdir: Path) -> Path | None:
    """``build/<variant>.kksig`` beside the variant (``kernelkit sign``), if it signs this very
    ``metadata.json``; one left from an earlier build is refused rather than published."""
    import hashlib

    from kernelkit.errors import SignatureMaterialError
    from kernelkit.signing.sigfile import parse_sigfile, signature_path

    path = signature_path(vdir)
    if not path.is_file():
        return None
    try:
        signed = parse_sigfile(read_bytes(path)).metadata_sha256
    except SignatureMaterialError as exc:
        raise KernelkitError(f"{path}: not a signature file ({exc})",
                             hint=f"delete it, or sign again: kernelkit sign {vdir}") from None
    if signed != hashlib.sha256(read_bytes(vdir / "metadata.json")).hexdigest():
        raise KernelkitError(f"{path} signs another build of {vdir.name} (its metadata.json "
                             "changed since it was signed); nothing was published",
                             hint=f"sign it again (`kernelkit sign {vdir}` or upload --sign), "
                                  "or delete the stale signature file")
    return path


def _benchmark_results(folder: Path, vdir: Path, files: dict[str, Path]) -> list[str]:
    """Add ``folder``'s files (results and charts of variant ``vdir``) when its
    ``benchmark.json`` names this very build (the sha256 of its ``metadata.json``); else
    return the folder as stale."""
    import hashlib
    import json

    result = folder / "benchmark.json"
    if not result.is_file():
        return []
    try:
        recorded = json.loads(result.read_bytes())["kernel"]["metadata_sha256"]
    except (OSError, ValueError, KeyError, TypeError):
        recorded = None
    if recorded != hashlib.sha256((vdir / "metadata.json").read_bytes()).hexdigest():
        return [str(folder)]
    for f in sorted(folder.iterdir()):
        if f.is_file() and not f.name.startswith("."):
            files[f"{RESULTS_DIR}/{vdir.name}/{f.name}"] = f
    return []


def _stage_readme(project: Path | None, build_root: Path, staging: Path, repo_id: str,
                  version: int, config: dict[str, Any]) -> Path | None:
    card = _card(project, build_root)
    if card is None:
        return None
    values = {"repo_id": repo_id, "version": str(version),
              "name": repo_id.split("/")[1], "license": str(config.get("license") or "")}
    out = staging / "README.md"
    text = read_input_text(card, MAX_TEXT_BYTES)  # InputFileError names the card
    out.write_text(render_card(text, values), encoding="utf-8")
    return out


# --- acting --------------------------------------------------------------------------------


def check_tag(tag: str, branch: str) -> str:
    """A release tag must be ``v<major>.<minor>.<patch>`` whose major is the branch's version."""
    m = SEMVER_TAG.match(tag)
    if not m:
        raise HubError(f"invalid release tag {tag!r}",
                       hint="use v<major>.<minor>.<patch>, e.g. v1.2.0")
    b = VERSION_BRANCH.match(branch)
    if not b:
        raise HubError(f"tag {tag} needs a version branch (v<major>), not {branch!r}",
                       hint="upload to a branch such as v1, or drop --tag")
    if m.group(1) != b.group(1):
        raise HubError(f"tag {tag} has major version {m.group(1)} but the branch is {branch}",
                       hint=f"use a tag v{b.group(1)}.<minor>.<patch>, or upload to v{m.group(1)}")
    return tag


def upload(path: Path, hub: Hub, *, repo_id: str | None = None, branch: str | None = None,
           tag: str | None = None, message: str | None = None,
           create_pr: bool = False, sign_key: SigningKey | None = None,
           sources: SourceArchive | None = None) -> UploadResult:
    """Verify the build tree at ``path`` and publish it to ``hub`` (see module docstring).

    ``create_pr``: open pull requests (one per branch with changes, as upstream) instead of
    moving the branches; only hubs with pull requests (the Hugging Face Hub API) can.
    ``sign_key``: sign every variant first (``build/<variant>.kksig``, published with it).
    ``sources``: the project's sources archive (``kernelkit.source_build.pack``), published as
    ``sources/<hex>.tar.gz`` when the variants record its digest."""
    import tempfile

    if sign_key is not None:
        from kernelkit.signing.sign import sign_tree

        sign_tree(Path(path), sign_key)

    if create_pr and tag is not None:
        raise HubError("--tag cannot be used with --create-pr: a release tag names a commit "
                       "of the version branch, and a pull request is not merged yet",
                       hint="tag the release after the pull request is merged")
    if create_pr and not hasattr(hub, "publish_pr"):
        raise HubError(f"the hub {hub} has no pull requests, so --create-pr cannot be used",
                       hint="publish to a Hugging Face Hub API endpoint (--hub hf), or drop "
                            "--create-pr")
    with tempfile.TemporaryDirectory(prefix="kernelkit-upload-") as tmp:
        plan = plan_upload(Path(path), repo_id=repo_id, branch=branch, staging=Path(tmp),
                           sources=sources)
        if tag is not None:
            check_tag(tag, plan.branch)
        if create_pr:
            return _publish_pr(plan, hub, message or DEFAULT_MESSAGE)
        return _publish(plan, hub, tag, message or DEFAULT_MESSAGE)


def _prefixes(plan: UploadPlan, old: str | None) -> tuple[str, ...]:
    if old is None:
        return ("build/", "benchmarks/")
    return (*tuple(f"build/{v}/" for v in plan.variants),
            *tuple(hub_path(v) for v in plan.variants), "benchmarks/benchmark",
            *tuple(f"{RESULTS_DIR}/{v}/" for v in plan.variants))


def _publish_pr(plan: UploadPlan, hub: Hub, message: str) -> UploadResult:
    publish_pr = getattr(hub, "publish_pr")  # noqa: B009 - checked by upload()
    exists = hub.repo_exists(plan.repo_id)
    old = hub.list_refs(plan.repo_id).branches.get(plan.branch) if exists else None
    commit, url = publish_pr(plan.repo_id, plan.branch, plan.files,
                             delete_prefixes=_prefixes(plan, old), message=message)
    unsent = (f"the sources were not published: with --create-pr nothing is written to the "
              f"{SOURCES_BRANCH} branch; upload once without --create-pr to publish them")
    warnings = plan.warnings + ((unsent,) if plan.sources else ())
    prs = [(plan.branch, url)] if url else []
    main_commit = None
    if plan.readme is not None and plan.branch != "main":
        main_commit, main_url = publish_pr(plan.repo_id, "main", {"README.md": plan.readme},
                                           message=message)
        prs += [("main", main_url)] if main_url else []
    return UploadResult(plan.repo_id, plan.branch, commit, None, plan.variants,
                        changed=bool(prs), main_commit=main_commit, warnings=warnings,
                        pull_requests=tuple(prs))


def _publish(plan: UploadPlan, hub: Hub, tag: str | None, message: str) -> UploadResult:
    """The version branch (and its tag, in one atomic step where the hub can), then ``main``'s
    README. ``main`` is shared by every upload of the repository, so a lost compare-and-swap
    there is retried on the new ``main`` instead of failing an upload that already landed."""
    if plan.sources is not None:  # first: no version may name sources the hub lacks
        _publish_retrying(hub, plan.repo_id, SOURCES_BRANCH,
                          {plan.sources.repo_path: plan.sources.path}, message)
    exists = hub.repo_exists(plan.repo_id)
    old = hub.list_refs(plan.repo_id).branches.get(plan.branch) if exists else None
    prefixes = _prefixes(plan, old)
    tagged = getattr(hub, "publish_tagged", None)
    if tag is not None and tagged is not None:
        commit: str = tagged(plan.repo_id, plan.branch, plan.files, tag=tag,
                             delete_prefixes=prefixes, message=message)
    else:
        commit = hub.publish(plan.repo_id, plan.branch, plan.files, delete_prefixes=prefixes,
                             message=message)
        if tag is not None:
            hub.tag(plan.repo_id, tag, commit)
    main_commit = None
    if plan.readme is not None and plan.branch != "main":
        main_commit = _publish_main(hub, plan.repo_id, plan.readme, message)
    elif plan.default_readme is not None and plan.branch != "main" \
            and not _main_has_card(hub, plan.repo_id):
        main_commit = _publish_main(hub, plan.repo_id, plan.default_readme, message)
    return UploadResult(plan.repo_id, plan.branch, commit, tag, plan.variants,
                        changed=commit != old, main_commit=main_commit, warnings=plan.warnings,
                        sources=plan.sources.digest if plan.sources else None)


MAIN_ATTEMPTS = 50


def _main_has_card(hub: Hub, repo_id: str) -> bool:
    main = hub.list_refs(repo_id).branches.get("main")
    return main is not None and hub.read_file(repo_id, main, "README.md") is not None


def _publish_main(hub: Hub, repo_id: str, readme: Path, message: str) -> str:
    """Publish README.md to ``main``, retrying a lost race (with a short random back-off)."""
    return _publish_retrying(hub, repo_id, "main", {"README.md": readme}, message)


def _publish_retrying(hub: Hub, repo_id: str, branch: str, files: dict[str, Path],
                      message: str) -> str:
    """Add ``files`` to ``branch``, shared by every upload of the repository (``main``, the
    sources branch), retrying a lost race (with a short random back-off)."""
    import random
    import time

    for attempt in range(MAIN_ATTEMPTS):
        try:
            return hub.publish(repo_id, branch, files, message=message)
        except PublishRaceError:
            if attempt == MAIN_ATTEMPTS - 1:
                raise
            time.sleep(random.uniform(0.01, 0.05) * (1 + attempt % 5))
    raise AssertionError("unreachable")  # pragma: no cover
