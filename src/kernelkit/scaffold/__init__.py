"""scaffold stage: ``kernelkit init`` renders a template directory into a new kernel project.

Templates live in ``scaffold/templates/<name>/`` with a ``template.toml`` (see ``template.py``).
"""

from kernelkit.errors import ScaffoldExistsError, TemplateError
from kernelkit.scaffold.init import init_git, init_project, plan_project
from kernelkit.scaffold.names import DEFAULT_OWNER, ProjectName, parse_project_name, resolve_target
from kernelkit.scaffold.render import render
from kernelkit.scaffold.template import (
    Template,
    available_templates,
    load_template,
    render_template,
    select_backends,
)

__all__ = [
    "DEFAULT_OWNER",
    "ProjectName",
    "ScaffoldExistsError",
    "Template",
    "TemplateError",
    "available_templates",
    "init_git",
    "init_project",
    "load_template",
    "parse_project_name",
    "plan_project",
    "render",
    "render_template",
    "resolve_target",
    "select_backends",
]
