"""Generators: manifest + identifiers -> file contents (strings); ``write_files`` writes them."""

from kernelkit.generate.project import build_files, generated_paths, project_files, write_files

__all__ = ["build_files", "generated_paths", "project_files", "write_files"]
