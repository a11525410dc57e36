"""Compile and package one variant: generate, CMake + ninja, lay out, seal (``variant``,
``noarch``), with the values it reports (``events``) and its work directories."""
