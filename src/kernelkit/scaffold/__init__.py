"""scaffold stage."""
