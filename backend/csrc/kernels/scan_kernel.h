// Inclusive scans along the rows of a contiguous (rows, length) view, and the stream compaction built
// on a scan (the positions where a mask is set).
#pragma once

#include <string>

#include "kernels/tensor_ref.h"

namespace torch_dml::kernels {

enum class ScanOp { Sum, Product, LogSumExp };

struct ScanProblem {
  ScanOp op = ScanOp::Sum;
  uint64_t rows = 0, length = 0;
  DeviceTensorRef out; // in the accumulation dtype (scan_accumulation_type)
  DeviceTensorRef src; // contiguous rows
};

// The dtype a scan of `type` accumulates and writes in on this adapter: int64 for integers and bool,
// float64 for float64, float32 for the other floats, except logcumsumexp, which accumulates in
// float64 where the adapter can: its backward takes differences of exponentials of the result, which
// magnify a float32 scan's rounding (the CPU accumulates every float scan in double).
c10::ScalarType scan_accumulation_type(runtime::DeviceContext& context, c10::ScalarType type, ScanOp op);

std::string scan_unsupported_reason(runtime::DeviceContext& context, const ScanProblem& problem);
void scan(runtime::DeviceContext& context, const ScanProblem& problem);

// out[k] = the index of the k-th set element, given `running` = the int64 inclusive scan of the mask
// (`count` elements; out holds running[count - 1] elements).
struct CompactProblem {
  uint64_t count = 0, selected = 0;
  DeviceTensorRef out;     // int64
  DeviceTensorRef running; // int64
};

std::string compact_unsupported_reason(runtime::DeviceContext& context, const CompactProblem& problem);
void compact(runtime::DeviceContext& context, const CompactProblem& problem);

} // namespace torch_dml::kernels
