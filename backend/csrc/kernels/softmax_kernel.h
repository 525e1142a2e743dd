// Softmax and log-softmax over the last dimension of a contiguous (rows, length) view, forward and
// backward: a workgroup per row (max, sum of exponentials, write), float32 arithmetic throughout.
#pragma once

#include <string>

#include "kernels/tensor_ref.h"

namespace torch_dml::kernels {

enum class SoftmaxKind { Softmax, LogSoftmax, SoftmaxBackward, LogSoftmaxBackward };

struct SoftmaxProblem {
  SoftmaxKind kind = SoftmaxKind::Softmax;
  uint64_t rows = 0, length = 0;
  DeviceTensorRef out;     // float32 (float64 for float64 input), contiguous rows
  DeviceTensorRef input;   // forward: x; backward: the forward output y (softmax_supports dtypes)
  DeviceTensorRef grad;    // backward only: dL/dy, same dtype as input
};

// Whether the kernel computes on `type` on this adapter (float32/16, bfloat16; float64 with
// shader-f64 and shader-int64).
bool softmax_supports(runtime::DeviceContext& context, c10::ScalarType type);

std::string softmax_unsupported_reason(runtime::DeviceContext& context, const SoftmaxProblem& problem);
void softmax(runtime::DeviceContext& context, const SoftmaxProblem& problem);

} // namespace torch_dml::kernels
