#include <torch/library.h>

#include "registration.h"
#include "torch_binding.h"

TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, ops) {
  ops.def("add_one(Tensor! out, Tensor input) -> ()");
#if defined(CPU_KERNEL)
  ops.impl("add_one", c10::kCPU, &add_one);
#elif defined(CUDA_KERNEL)
  ops.impl("add_one", c10::kCUDA, &add_one);
#endif
}

REGISTER_EXTENSION(TORCH_EXTENSION_NAME)
