"""The builder: from a manifest to sealed ``build/<variant>/`` trees, through one pipeline
(plan → environment → compile → package → seal; docs/design.md maps its modules).

Nothing here parses arguments or prints: the CLI (``kernelkit.cli.cmd_build``) renders the
plan and the events. This package import stays light (no torch, no cmake).
"""
