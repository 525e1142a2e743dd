// float16/bfloat16 values taken to float32 for ops composed of native ops that must round once, as
// the CPU kernels (which accumulate in float32) do; other dtypes pass through.
#pragma once

#include <ATen/core/Tensor.h>

namespace torch_dml::aten {

inline at::Tensor widened(const at::Tensor& t) {
  return t.scalar_type() == c10::kHalf || t.scalar_type() == c10::kBFloat16 ? t.to(c10::kFloat) : t;
}

} // namespace torch_dml::aten
