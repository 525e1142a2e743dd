// Softmax and log-softmax over the last dimension of a contiguous (rows, length) view, forward and
// backward, float32 arithmetic (float64 for float64). Rows up to 4096 elements (8192 float32 rows that
// load as vec4) are held whole by a team of lanes (kernels/held_row.h): read once, written once in the
// output's dtype. Longer rows take a workgroup each (max, sum of exponentials, write), which writes
// float32 (float64). A dim that is not the last (`inner` > 1) takes a thread per (outer, inner) column
// walking the dim in place, which writes float32 (float64).
#pragma once

#include <string>

#include "kernels/tensor_ref.h"

namespace torch_dml::kernels {

enum class SoftmaxKind { Softmax, LogSoftmax, SoftmaxBackward, LogSoftmaxBackward };

struct SoftmaxProblem {
  SoftmaxKind kind = SoftmaxKind::Softmax;
  uint64_t rows = 0, length = 0;
  uint64_t inner = 1;      // elements after the softmax dim: the operands are contiguous (rows, length,
                           // inner) views, rows of `length` contiguous elements when 1
  DeviceTensorRef out;     // contiguous: float32 (float64 for float64 input), or where
                           // softmax_stores() says so the input's dtype
  DeviceTensorRef input;   // forward: x; backward: the forward output y (softmax_supports dtypes)
  DeviceTensorRef grad;    // backward only: dL/dy, same dtype as input
};

// Whether the kernel computes on `type` on this adapter (float32/16, bfloat16; float64 with
// shader-f64 and shader-int64).
bool softmax_supports(runtime::DeviceContext& context, c10::ScalarType type);

// Whether softmax() can write `problem.out` as bound (its dtype and alignment): always for float32
// (float64) output, for float16 output only where rows are held and pairs of elements stay in one word.
bool softmax_stores(runtime::DeviceContext& context, const SoftmaxProblem& problem);

std::string softmax_unsupported_reason(runtime::DeviceContext& context, const SoftmaxProblem& problem);
void softmax(runtime::DeviceContext& context, const SoftmaxProblem& problem);

} // namespace torch_dml::kernels
