// Element scatter over flat contiguous tensors, out[index[i]] = src[i], for every dtype (bits moved),
// the last write winning where positions repeat (a serial loop's rule; PyTorch leaves it undefined), the
// same on every adapter. index_put_, scatter, index_copy and index_fill reduce to it once their
// positions are linear.
#pragma once

#include <string>

#include "kernels/tensor_ref.h"

namespace torch_dml::kernels {

struct PutProblem {
  uint64_t count = 0;     // elements of out
  uint64_t sources = 0;   // elements of src and index
  DeviceTensorRef out;    // contiguous; a sub-word dtype must start on a word boundary; written in place
  DeviceTensorRef src;    // contiguous, same dtype as out, not overlapping it
  DeviceTensorRef index;  // int64 or int32, contiguous, every value in [0, count)
  DeviceTensorRef winner; // int32 [count], contiguous, filled with -1 by the caller
};

std::string put_unsupported_reason(runtime::DeviceContext& context, const PutProblem& problem);
void put(runtime::DeviceContext& context, const PutProblem& problem);

} // namespace torch_dml::kernels
