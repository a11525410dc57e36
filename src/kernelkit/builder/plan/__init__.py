"""Planning, pure: which variants a project builds here and how (names, CUDA capabilities,
every pre-compile check), from this machine's facts gathered once (docs/design.md maps it)."""
