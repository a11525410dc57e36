"""The toolchain a variant compiles with: pinned environments, the CUDA toolkit, the probed
torch, the build tools, the ``kernelkit.toolchain.lock`` format and header-only dependencies."""
