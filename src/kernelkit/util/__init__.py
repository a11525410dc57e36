"""Small utilities shared by every stage: subprocesses, atomic files, locks."""
