// Batched GEMM: out[b] = alpha * A[b] @ B[b] + beta * addend[b], any strides on every operand (so
// transposed and broadcast operands need no copies), float32 accumulation, float32 output.
// A, B and the addend are float32, float16 or bfloat16 (one dtype for all three), or all float64
// (float64 accumulation and output) on an adapter with shader-f64, or all one integer dtype.
#pragma once

#include <optional>
#include <string>

#include "kernels/copy_kernel.h"

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
  double alpha = 1.0;
  double beta = 0.0;
  int64_t alpha_int = 1; // for integer operands
  int64_t beta_int = 0;
};

// The dtype a GEMM of `type` operands accumulates in and writes: float32 for float32/16 and bfloat16,
// int32 for the ints up to 32 bits, float64 and int64 for themselves.
c10::ScalarType gemm_accumulator(c10::ScalarType type);

// "" when the kernel can run the problem; otherwise why not (dtype, sizes beyond 32-bit indexing,
// an operand beyond one storage binding).
std::string gemm_unsupported_reason(runtime::DeviceContext& context, const GemmProblem& problem);

void gemm(runtime::DeviceContext& context, const GemmProblem& problem);

} // namespace torch_dml::kernels
