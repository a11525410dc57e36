"""The builder's caches: whole variants (``build_cache``), compiled units (ccache,
``compiler_cache``), configured CMake trees and CMake's compiler identification."""
