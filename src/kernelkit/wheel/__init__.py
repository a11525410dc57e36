"""wheel stage."""
