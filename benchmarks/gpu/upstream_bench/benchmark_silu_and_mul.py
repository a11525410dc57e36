"""A benchmark script in upstream's contract (`kernels.benchmark.Benchmark`) for upstream's
`silu-and-mul` example project (a noarch kernel: a torch custom op), which ships none:
run_benchmark_templates.sh copies it into a work copy of the example. Written for kernelkit's
GPU run (not upstream code)."""

import torch
import torch.nn.functional as F
from kernels.benchmark import Benchmark


def reference(x):
    d = x.shape[-1] // 2
    return F.silu(x[..., :d]) * x[..., d:]


class SiluAndMulBenchmark(Benchmark):
    seed = 0
    rtol = 4e-3  # float16: a few units in the last place (kernelkit; upstream ignores it)

    def _inputs(self, tokens: int, d: int) -> None:
        dtype = torch.float32 if self.device == "cpu" else torch.float16
        self.x = torch.randn(tokens, 2 * d, device=self.device, dtype=dtype)

    def setup_small(self):
        self._inputs(128, 1024)

    def benchmark_small(self):
        self.out = self.kernel.silu_and_mul(self.x)

    def verify_small(self):
        return reference(self.x)

    def bytes_small(self):
        return self.x.nbytes * 3 // 2

    def flops_small(self):
        return 5 * self.x.numel() // 2

    def setup_large(self):
        self._inputs(*((16384, 8192) if self.device != "cpu" else (1024, 2048)))

    def benchmark_large(self):
        self.out = self.kernel.silu_and_mul(self.x)

    def verify_large(self):
        return reference(self.x)

    def bytes_large(self):
        return self.x.nbytes * 3 // 2

    def flops_large(self):
        return 5 * self.x.numel() // 2
