"""manifest stage."""
