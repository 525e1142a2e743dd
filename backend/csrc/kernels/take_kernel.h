// Element gather over flat contiguous tensors: out[e] = src[index[e]] for every dtype (bits moved,
// sub-word dtypes assembled a word at a time). take, gather and advanced indexing reduce to it once
// their indices are linear.
#pragma once

#include <string>

#include "kernels/tensor_ref.h"

namespace torch_dml::kernels {

struct TakeProblem {
  uint64_t count = 0;     // elements of out and index
  uint64_t src_count = 0; // elements of src
  DeviceTensorRef out;    // contiguous; a sub-word dtype must start on a word boundary
  DeviceTensorRef src;    // contiguous, same dtype as out
  DeviceTensorRef index;  // int64 or int32, contiguous, every value in [0, src_count)
};

std::string take_unsupported_reason(runtime::DeviceContext& context, const TakeProblem& problem);
void take(runtime::DeviceContext& context, const TakeProblem& problem);

} // namespace torch_dml::kernels
