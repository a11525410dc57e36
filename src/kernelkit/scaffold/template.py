"""Scaffold templates: a directory per template under ``scaffold/templates/`` described by
``template.toml``. Adding a template is adding a directory; no code changes.

``template.toml``::

    [template]
    description = "one line shown by `kernelkit init --help`"
    backends = ["cpu", "cuda"]          # backends the template has sources for
    default-backends = ["cpu", "cuda"]  # used when --backends is not given

    [[file]]                            # one entry per generated file
    src = "build.toml.tmpl"             # relative to the template directory
    dest = "build.toml"                 # may use placeholders: "{{python_name}}_cuda/x.cu"
    backends = ["cuda"]                 # optional: only when one of these is selected

    [fragment.kernel_sections]          # a placeholder built from one piece per backend,
    cuda = "fragments/kernel-cuda.toml.tmpl"  # joined by a blank line in the order listed,
    cpu = "fragments/kernel-cpu.toml.tmpl"    # for the selected backends only

Placeholders every template can use: ``name`` (kebab-case kernel name), ``python_name``,
``class_name``, ``owner``, ``repo_id``, ``license``, ``version``, ``backends_toml``
(``"cpu", "cuda"``), ``backends_text`` (``cpu, cuda``), ``template``, ``load_call`` (the
``get_kernel`` line that loads the published kernel, trust included), plus one per fragment.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kernelkit.errors import TemplateError
from kernelkit.manifest.model import BACKENDS
from kernelkit.scaffold.names import ProjectName
from kernelkit.scaffold.render import render
from kernelkit.util.usage import load_call

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

TEMPLATES_DIR = Path(__file__).parent / "templates"


@dataclass(frozen=True)
class TemplateFile:
    src: str
    dest: str
    backends: tuple[str, ...] | None = None  # None: always

    def wanted(self, selected: tuple[str, ...]) -> bool:
        return self.backends is None or any(b in selected for b in self.backends)


@dataclass(frozen=True)
class Template:
    name: str
    root: Path
    description: str
    backends: tuple[str, ...]
    default_backends: tuple[str, ...]
    files: tuple[TemplateFile, ...]
    fragments: dict[str, dict[str, str]]  # placeholder -> backend -> src (ordered)


def available_templates(templates_dir: Path = TEMPLATES_DIR) -> list[str]:
    """Names of the templates in ``templates_dir`` (default: those shipped with kernelkit)."""
    return sorted(p.parent.name for p in templates_dir.glob("*/template.toml"))


def load_template(name: str, templates_dir: Path = TEMPLATES_DIR) -> Template:
    """Read ``<templates_dir>/<name>/template.toml``; raise :class:`TemplateError` if it is
    unusable."""
    root = templates_dir / name
    spec = root / "template.toml"
    if not spec.is_file():
        raise TemplateError(
            f"unknown template {name!r}",
            hint=f"available templates: {', '.join(available_templates(templates_dir))}")
    try:
        data = tomllib.loads(spec.read_text(encoding="utf-8"))
        return _template_from_toml(name, root, data)
    except (tomllib.TOMLDecodeError, KeyError, TypeError, ValueError) as exc:
        raise TemplateError(f"{spec}: invalid template description: {exc}") from None


def _str_tuple(value: Any, what: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TypeError(f"{what} must be a list of strings")
    unknown = [v for v in value if v not in BACKENDS]
    if unknown:
        raise ValueError(f"{what}: unknown backend(s) {', '.join(unknown)}")
    return tuple(value)


def _template_from_toml(name: str, root: Path, data: dict[str, Any]) -> Template:
    head = data["template"]
    backends = _str_tuple(head["backends"], "template.backends")
    files = []
    for i, entry in enumerate(data.get("file", [])):
        fb = entry.get("backends")
        only = _str_tuple(fb, f"file[{i}].backends") if fb is not None else None
        files.append(TemplateFile(str(entry["src"]), str(entry["dest"]), only))
    fragments: dict[str, dict[str, str]] = {}
    for key, pieces in data.get("fragment", {}).items():
        if not isinstance(pieces, dict):
            raise TypeError(f"fragment.{key} must be a table of backend = file")
        _str_tuple(list(pieces), f"fragment.{key}")
        fragments[key] = {b: str(src) for b, src in pieces.items()}
    for src in [f.src for f in files] + [s for p in fragments.values() for s in p.values()]:
        if not (root / src).is_file():
            raise ValueError(f"template file {src} does not exist")
    return Template(name, root, str(head.get("description", "")), backends,
                    _str_tuple(head.get("default-backends", list(backends)),
                               "template.default-backends"),
                    tuple(files), fragments)


def select_backends(template: Template, requested: list[str] | tuple[str, ...] | None
                    ) -> tuple[str, ...]:
    """Validate the requested backends (``all`` = every backend of the template) and put them
    in canonical order."""
    if not requested:
        chosen = set(template.default_backends)
    elif "all" in requested:
        chosen = set(template.backends)
    else:
        chosen = {b.lower() for b in requested}
    unsupported = sorted(chosen - set(template.backends))
    if unsupported:
        raise TemplateError(
            f"template {template.name!r} has no sources for backend(s) {', '.join(unsupported)}",
            hint=f"choose among: {', '.join(template.backends)}",
        )
    return tuple(b for b in BACKENDS if b in chosen)


def base_context(template: Template, info: ProjectName, backends: tuple[str, ...],
                 license: str) -> dict[str, str]:
    return {
        "name": info.name,
        "python_name": info.python_name,
        "class_name": info.class_name,
        "owner": info.owner,
        "repo_id": info.repo_id,
        "license": license,
        "version": "1",
        "backends_toml": ", ".join(f'"{b}"' for b in backends),
        "backends_text": ", ".join(backends),
        "template": template.name,
        # the line that loads the published kernel, trust_remote_code=True included unless the
        # owner is trusted by default (util/usage.py)
        "load_call": load_call(info.repo_id, version=1),
    }


def render_template(template: Template, info: ProjectName, backends: tuple[str, ...],
                    license: str = "Apache-2.0") -> dict[str, str]:
    """All files of a new project: ``{relative path: content}`` (nothing is written)."""
    ctx = base_context(template, info, backends, license)
    for key, pieces in template.fragments.items():
        parts = [_render_file(template, src, ctx) for b, src in pieces.items() if b in backends]
        ctx[key] = "\n\n".join(p.rstrip("\n") for p in parts)
    out: dict[str, str] = {}
    for f in template.files:
        if f.wanted(backends):
            dest = render(f.dest, ctx, where=f"{template.name}/template.toml dest {f.dest!r}")
            out[dest] = _render_file(template, f.src, ctx)
    return out


def _render_file(template: Template, src: str, ctx: dict[str, str]) -> str:
    text = (template.root / src).read_text(encoding="utf-8")
    return render(text, ctx, where=f"template {template.name}/{src}")
