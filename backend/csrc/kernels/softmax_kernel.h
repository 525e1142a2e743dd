// Softmax and log-softmax over the last dimension of a contiguous (rows, length) view, forward and
// backward: a workgroup per row (max, sum of exponentials, write), float32 arithmetic throughout.
#pragma once

#include "kernels/copy_kernel.h"

namespace torch_dml::kernels {

enum class SoftmaxKind { Softmax, LogSoftmax, SoftmaxBackward, LogSoftmaxBackward };

struct SoftmaxProblem {
  SoftmaxKind kind = SoftmaxKind::Softmax;
  uint64_t rows = 0, length = 0;
  DeviceTensorRef out;     // float32, contiguous rows
  DeviceTensorRef input;   // forward: x; backward: the forward output y (float32/float16/bfloat16)
  DeviceTensorRef grad;    // backward only: dL/dy, same dtype as input
};

std::string softmax_unsupported_reason(runtime::DeviceContext& context, const SoftmaxProblem& problem);
void softmax(runtime::DeviceContext& context, const SoftmaxProblem& problem);

} // namespace torch_dml::kernels
