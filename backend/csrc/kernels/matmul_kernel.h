// Batched GEMM: out[b] = alpha * A[b] @ B[b] + beta * addend[b], any strides on every operand (so
// transposed and broadcast operands need no copies). A, B and the addend share one dtype; the
// output is gemm_accumulator's dtype. An output of few tiles over a long K runs split-K: two
// dispatches, the second adding the slices' partial products in a fixed order.
#pragma once

#include <c10/core/Scalar.h>

#include <optional>
#include <string>

#include "kernels/tensor_ref.h"

namespace torch_dml::kernels {

struct MatrixOperand {
  DeviceTensorRef ref;        // element_offset: the operand's [0][0][0] element
  uint64_t batch_stride = 0;  // elements
  uint64_t row_stride = 0;
  uint64_t col_stride = 0;
};

struct GemmProblem {
  uint64_t batch = 1, m = 0, n = 0, k = 0;
  MatrixOperand a, b;
  MatrixOperand out; // gemm_accumulator(a's dtype)
  std::optional<MatrixOperand> addend;
  c10::Scalar alpha = 1; // converted to the accumulator's type (integers truncate, as on the CPU)
  c10::Scalar beta = 0;
};

// The dtype a GEMM of `type` operands accumulates in and writes: float32 for float32/16 and bfloat16,
// int32 for the ints up to 32 bits, float64 and int64 for themselves.
c10::ScalarType gemm_accumulator(c10::ScalarType type);

// Whether the kernel computes on `type` on this adapter (every dtype but bool, given its features).
bool gemm_supports(runtime::DeviceContext& context, c10::ScalarType type);

// "" when the kernel can run the problem; otherwise why not (dtype, sizes beyond 32-bit indexing,
// an operand beyond one storage binding).
std::string gemm_unsupported_reason(runtime::DeviceContext& context, const GemmProblem& problem);

void gemm(runtime::DeviceContext& context, const GemmProblem& problem);

} // namespace torch_dml::kernels
