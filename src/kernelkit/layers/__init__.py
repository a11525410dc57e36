"""layers stage."""
