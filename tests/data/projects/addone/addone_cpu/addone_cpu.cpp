#include <ATen/core/Tensor.h>
#include <c10/util/Exception.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace {
// Exercises libstdc++ facilities whose inline code references newer symbol versions
// (atomic refcounts, call_once, new[]), so the compliance shims are really tested.
std::once_flag checked_once;
std::shared_ptr<std::string> label;
}  // namespace

void add_one(at::Tensor &out, at::Tensor const &input) {
  std::call_once(checked_once, [] { label = std::make_shared<std::string>("add_one"); });
  auto copy = label;
  TORCH_CHECK(input.scalar_type() == at::kFloat, *copy, ": input must be float32");
  TORCH_CHECK(out.sizes() == input.sizes(), *copy, ": out and input must have the same shape");
  TORCH_CHECK(input.is_contiguous() && out.is_contiguous(), *copy, ": tensors must be contiguous");
  const float *src = input.data_ptr<float>();
  float *dst = out.data_ptr<float>();
  int64_t n = input.numel();
  std::unique_ptr<float[]> tmp(new float[n > 0 ? n : 1]);
  for (int64_t i = 0; i < n; ++i) tmp[i] = src[i] + 1.0f;
  std::vector<float> v(tmp.get(), tmp.get() + n);
  for (int64_t i = 0; i < n; ++i) dst[i] = v[i];
}
