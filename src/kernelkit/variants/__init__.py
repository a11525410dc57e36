"""variants stage."""
