"""A benchmark script in upstream's contract (`kernels.benchmark.Benchmark`) for upstream's
`relu` example project, which ships none: run_benchmark_templates.sh copies it into a work copy
of the example as benchmarks/benchmark_relu.py. Written for kernelkit's GPU run (not upstream
code); kernelkit's `bytes_`/`flops_` extras place it on the roofline."""

import torch
import torch.nn.functional as F
from kernels.benchmark import Benchmark


class ReluBenchmark(Benchmark):
    seed = 0

    def _inputs(self, n: int) -> None:
        self.x = torch.randn(n, device=self.device, dtype=torch.float32)
        self.out = torch.empty_like(self.x)

    def setup_small(self):
        self._inputs(1 << 16)

    def benchmark_small(self):
        self.kernel.relu(self.x, out=self.out)

    def verify_small(self):
        return F.relu(self.x)

    def bytes_small(self):
        return 2 * self.x.nbytes

    def flops_small(self):
        return self.x.numel()

    def setup_large(self):
        self._inputs(1 << 28 if self.device != "cpu" else 1 << 22)  # GPU: 1 GiB in, 1 GiB out

    def benchmark_large(self):
        self.kernel.relu(self.x, out=self.out)

    def verify_large(self):
        return F.relu(self.x)

    def bytes_large(self):
        return 2 * self.x.nbytes

    def flops_large(self):
        return self.x.numel()
