#include <torch/library.h>

#include "registration.h"
#include "torch_binding.h"

namespace {

// The op can be called directly (torch.ops.<namespace>.img2gray), bypassing the Python
// wrapper, so the arguments are checked here too.
void img2gray_checked(at::Tensor const &input, at::Tensor &out) {
  TORCH_CHECK(input.scalar_type() == at::kByte,
              "img2gray: input must be uint8, got ", input.scalar_type());
  TORCH_CHECK(out.scalar_type() == at::kByte,
              "img2gray: out must be uint8, got ", out.scalar_type());
  TORCH_CHECK((input.dim() == 3 || input.dim() == 4) && input.size(-1) == 3,
              "img2gray: input must have shape (H, W, 3) or (N, H, W, 3), got ",
              input.sizes());
  TORCH_CHECK(out.sizes() == input.sizes().slice(0, input.dim() - 1),
              "img2gray: out must have shape ", input.sizes().slice(0, input.dim() - 1),
              ", got ", out.sizes());
  TORCH_CHECK(input.is_contiguous(), "img2gray: input must be contiguous");
  TORCH_CHECK(out.is_contiguous(), "img2gray: out must be contiguous");
  TORCH_CHECK(input.device() == out.device(), "img2gray: input is on ",
              input.device(), " but out is on ", out.device());
  img2gray(input, out);
}

}  // namespace

TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, ops) {
  ops.def("img2gray(Tensor input, Tensor! out) -> ()");
#if defined(CPU_KERNEL)
  ops.impl("img2gray", c10::kCPU, &img2gray_checked);
#elif defined(CUDA_KERNEL)
  ops.impl("img2gray", c10::kCUDA, &img2gray_checked);
#endif
}

REGISTER_EXTENSION(TORCH_EXTENSION_NAME)
