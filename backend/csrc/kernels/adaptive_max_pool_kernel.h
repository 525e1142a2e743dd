// adaptive_max_pool2d's forward (wgsl/adaptive_max_pool.wgsl): values in the computation type and
// int64 flat indices of the maxima, for an NCHW-contiguous float input; and its backward
// (wgsl/adaptive_max_pool_backward.wgsl), the input's gradient gathered from the outputs that saved it.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/tensor_ref.h"
#include "runtime/device.h"

namespace torch_dml::kernels {

struct AdaptiveMaxPoolProblem {
  bool backward = false;
  uint64_t planes = 0; // N * C
  uint64_t in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  // Contiguous. Forward: src the input (float32 / float16 / bfloat16 / float64), out the values
  // (float32, float64 for a float64 input; planes * out_h * out_w). Backward: src grad_output (the
  // input's dtype), out grad_input (planes * in_h * in_w, in the same computation type).
  DeviceTensorRef src;
  DeviceTensorRef out;
  DeviceTensorRef indices; // int64, contiguous, bound as u32 words (element_offset in words)
};

std::string adaptive_max_pool_unsupported_reason(runtime::DeviceContext& context, const AdaptiveMaxPoolProblem& a);
void adaptive_max_pool(runtime::DeviceContext& context, const AdaptiveMaxPoolProblem& a);

} // namespace torch_dml::kernels
