"""loader stage."""
