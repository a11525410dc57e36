"""The builder: from a manifest to sealed ``build/<variant>/`` trees, through one pipeline,
one subpackage per job (docs/design.md maps its modules):

* ``api.py``: the entry (``plan_build``, ``run_plan``, ``build``); ``execute.py`` the loop;
* ``plan/``: which variants, each buildable or refused, and how (pure);
* ``toolchain/``: the environment, toolkit, torch and tools a variant compiles with;
* ``caches/``: what a rebuild skips (variants, units, configures);
* ``compile/``: compile, lay out and seal one variant.

Imports point down that list (``compile`` → ``caches`` → ``plan`` → ``toolchain``; an
import-linter contract holds it). Nothing here parses arguments or prints: the CLI
(``kernelkit.cli.cmd_build``) renders the plan and the events. This package import stays light
(no torch, no cmake).
"""
