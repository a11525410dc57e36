"""CI configuration generators: pure functions from build targets to workflow text."""
