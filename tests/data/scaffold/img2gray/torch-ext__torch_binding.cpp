#include <ATen/ops/empty.h>
#include <torch/library.h>

#include "registration.h"
#include "torch_binding.h"

namespace {

// The arguments are checked here, in C++, so that a call costs what the kernel costs: the
// Python function is a thin call to the op. TORCH_CHECK_TYPE raises TypeError in Python,
// TORCH_CHECK_VALUE raises ValueError.
void check_input(at::Tensor const &input) {
  TORCH_CHECK_TYPE(input.scalar_type() == at::kByte,
                   "img2gray: image must have dtype torch.uint8, got ", input.scalar_type());
  TORCH_CHECK_VALUE((input.dim() == 3 || input.dim() == 4) && input.size(-1) == 3,
                    "img2gray: image must have shape (H, W, 3) or (N, H, W, 3), got ",
                    input.sizes());
  TORCH_CHECK_VALUE(input.is_contiguous(),
                    "img2gray: image must be contiguous; call .contiguous() first");
}

void check_out(at::Tensor const &out, at::Tensor const &input) {
  TORCH_CHECK_TYPE(out.scalar_type() == at::kByte,
                   "img2gray: out must have dtype torch.uint8, got ", out.scalar_type());
  const at::IntArrayRef expected = input.sizes().slice(0, input.dim() - 1);
  TORCH_CHECK_VALUE(out.sizes() == expected, "img2gray: out must have shape ", expected,
                    ", got ", out.sizes());
  TORCH_CHECK_VALUE(out.is_contiguous(), "img2gray: out must be contiguous");
  TORCH_CHECK_VALUE(out.device() == input.device(), "img2gray: out is on ", out.device(),
                    " but image is on ", input.device());
}

// img2gray(Tensor input) -> Tensor: checks, allocates the output, runs the kernel.
at::Tensor img2gray_functional(at::Tensor const &input) {
  check_input(input);
  at::Tensor out = at::empty(input.sizes().slice(0, input.dim() - 1), input.options());
  img2gray(input, out);
  return out;
}

// img2gray.out(Tensor input, Tensor! out) -> (): writes into a caller's tensor.
void img2gray_out(at::Tensor const &input, at::Tensor &out) {
  check_input(input);
  check_out(out, input);
  img2gray(input, out);
}

}  // namespace

TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, ops) {
  ops.def("img2gray(Tensor input) -> Tensor");
  ops.def("img2gray.out(Tensor input, Tensor! out) -> ()");
#if defined(CPU_KERNEL)
  ops.impl("img2gray", c10::kCPU, &img2gray_functional);
  ops.impl("img2gray.out", c10::kCPU, &img2gray_out);
#elif defined(CUDA_KERNEL)
  ops.impl("img2gray", c10::kCUDA, &img2gray_functional);
  ops.impl("img2gray.out", c10::kCUDA, &img2gray_out);
#endif
}

REGISTER_EXTENSION(TORCH_EXTENSION_NAME)
