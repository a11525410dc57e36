#include <ATen/core/Tensor.h>
#include <ATen/cuda/CUDAContext.h>  // pulls cublas/cusparse headers from the nvidia wheels
#include <c10/cuda/CUDAGuard.h>

__global__ void add_one_kernel(float *__restrict__ out, const float *__restrict__ in, int64_t n) {
  int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = in[i] + 1.0f;
}

void add_one(at::Tensor &out, at::Tensor const &input) {
  TORCH_CHECK(input.is_cuda() && out.is_cuda(), "add_one: tensors must be on a CUDA device");
  TORCH_CHECK(input.scalar_type() == at::kFloat, "add_one: input must be float32");
  TORCH_CHECK(out.sizes() == input.sizes(), "add_one: out and input must have the same shape");
  TORCH_CHECK(input.is_contiguous() && out.is_contiguous(), "add_one: tensors must be contiguous");
  const c10::cuda::CUDAGuard guard(input.device());
  int64_t n = input.numel();
  if (n == 0) return;
  const int threads = 256;
  const int64_t blocks = (n + threads - 1) / threads;
  add_one_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
      out.data_ptr<float>(), input.data_ptr<float>(), n);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}
