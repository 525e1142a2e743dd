// Row sort: the stable sorting permutation of each contiguous row of up to kSortCapacity elements
// (sort, argsort and topk gather their values through it).
#pragma once

#include <string>

#include "kernels/tensor_ref.h"

namespace torch_dml::kernels {

constexpr uint64_t kSortCapacity = 1024;

struct SortProblem {
  uint64_t rows = 0, length = 0;
  bool descending = false;
  DeviceTensorRef out; // int64: positions within the row, in sorted order
  DeviceTensorRef src; // contiguous rows
};

std::string sort_unsupported_reason(runtime::DeviceContext& context, const SortProblem& problem);
void sort_rows(runtime::DeviceContext& context, const SortProblem& problem);

} // namespace torch_dml::kernels
