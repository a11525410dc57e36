"""artifact stage."""
