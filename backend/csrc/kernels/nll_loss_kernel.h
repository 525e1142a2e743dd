// Negative log-likelihood over (N, C) log-probabilities with int64 class targets: the forward loss
// (per sample, or summed / weighted-mean in one workgroup) and the scatter of its gradient.
#pragma once

#include <optional>

#include "kernels/tensor_ref.h"

namespace torch_dml::kernels {

struct NllLossProblem {
  bool backward = false;
  int64_t reduction = 1; // 0 none, 1 mean, 2 sum (at::Reduction)
  int64_t ignore_index = -100;
  uint64_t samples = 0, classes = 0;
  DeviceTensorRef input;                 // (N, C), contiguous, float32/float16/bfloat16
  DeviceTensorRef target;                // (N,), int64, contiguous
  std::optional<DeviceTensorRef> weight; // (C,), the input's dtype
  // forward: out = per-sample losses (none) or [loss, total_weight] (mean/sum), float32.
  // backward: out = grad_input (N, C) float32, zero-filled by the caller; grad = grad_output (float32,
  // per sample for none, else one value); total = total_weight (float32, one value).
  DeviceTensorRef out;
  DeviceTensorRef grad, total;
};

void nll_loss(runtime::DeviceContext& context, const NllLossProblem& problem);

} // namespace torch_dml::kernels
