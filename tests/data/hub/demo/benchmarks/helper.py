"""Not a benchmark*.py file: never uploaded."""
