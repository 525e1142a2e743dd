// Reductions over any set of dimensions: one variant of kernels/wgsl/reduce.wgsl per (op, dtypes,
// ranks, mode), each op a row of the table in reduce_kernel.cpp. Mode is a thread per output for short
// rows, or a workgroup per output (strided loop + workgroup-memory tree) for long ones. Accumulation is float32 for 16/32-bit floats, float64 for float64, int64 for
// integer sums, the input's own (widened) type for max/min.
#pragma once

#include <optional>
#include <string>

#include "kernels/copy_kernel.h"

namespace torch_dml::kernels {

enum class ReduceOp {
  Sum, NanSum, Prod, Mean, Max, Min, ArgMax, ArgMin, Any, All, Var, CountNonzero,
  Norm0, Norm1, Norm2, NormP, NormInf, NormNegInf,
};

struct ReduceGeometry {
  int out_rank = 0, red_rank = 0;
  uint64_t out_numel = 1, red_numel = 1;
  uint32_t out_shape[kMaxCopyRank] = {}, out_in_stride[kMaxCopyRank] = {}, out_stride[kMaxCopyRank] = {},
           index_stride[kMaxCopyRank] = {};
  uint32_t red_shape[kMaxCopyRank] = {}, red_in_stride[kMaxCopyRank] = {};
};

struct ReduceProblem {
  ReduceOp op = ReduceOp::Sum;
  DeviceTensorRef input;
  DeviceTensorRef out;                    // float32, float64, int32 or int64: the accumulator's type
  std::optional<DeviceTensorRef> indices; // int64, for ArgMax/ArgMin (and max/min over a dim)
  ReduceGeometry geometry;
  double scale = 1.0;   // Mean: 1/N; Var: 1/max(N - correction, 0)
  double p = 2.0;       // NormP: the order
  bool sqrt_result = false; // Var -> std
};

// The accumulator dtype an op uses for an input dtype (the dtype `out` must have).
c10::ScalarType reduce_accumulator(ReduceOp op, c10::ScalarType input, c10::ScalarType result);

std::string reduce_unsupported_reason(runtime::DeviceContext& context, const ReduceProblem& problem);

void reduce(runtime::DeviceContext& context, const ReduceProblem& problem);

} // namespace torch_dml::kernels
