// Row gather (index_select, embedding): out[a, i, :] = self[a, index[i], :] for contiguous views,
// moving whole 32-bit words, so any dtype whose rows are a whole number of words is served.
#pragma once

#include <string>

#include "kernels/tensor_ref.h"

namespace torch_dml::kernels {

struct GatherProblem {
  uint64_t outer = 1;       // product of the dims before the indexed one
  uint64_t source_rows = 0; // size of the indexed dim in self
  uint64_t count = 0;       // number of indices
  uint64_t row_words = 0;   // 32-bit words per row (product of trailing dims * itemsize / 4)
  DeviceTensorRef out;      // raw words (dtype kInt is used for addressing)
  DeviceTensorRef self;
  DeviceTensorRef index;    // int64 or int32, validated in range by the caller
};

std::string gather_unsupported_reason(runtime::DeviceContext& context, const GatherProblem& problem);
void gather_rows(runtime::DeviceContext& context, const GatherProblem& problem);

} // namespace torch_dml::kernels
