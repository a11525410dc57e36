"""Benchmark of demo.scale (uploaded with the kernel as benchmarks/benchmark_scale.py)."""
