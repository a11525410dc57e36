"""Run a kernel project's own tests against its built variants (``kernelkit test``).

    choose.py   which built variants fit this machine, and the interpreter each runs in
    run.py      one variant's test run: import links, LOCAL_KERNELS, pytest in a subprocess
"""

from kernelkit.testing.choose import VariantTest, choose_variant_tests
from kernelkit.testing.run import VariantTestOutcome, run_variant_tests

__all__ = ["VariantTest", "VariantTestOutcome", "choose_variant_tests", "run_variant_tests"]
