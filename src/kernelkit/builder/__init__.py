"""build stage: probe the target Python, plan a variant, compile it with CMake + ninja (+ nvcc).

``build_variant`` / ``build`` are imported lazily by their users (``kernelkit.builder.compile``,
``kernelkit.builder.api``); this package import stays light.
"""
