// Row sort: the stable sorting permutation of each contiguous row (sort, argsort, topk, median,
// kthvalue and randperm gather through it). A row of up to kSortCapacity elements sorts in one
// workgroup; a longer one sorts as runs of kSortCapacity, then merges pairs of runs, one dispatch per
// pass, ceil(log2(length / kSortCapacity)) passes, through the caller's scratch buffers.
#pragma once

#include <string>

#include "kernels/tensor_ref.h"

namespace torch_dml::kernels {

constexpr uint64_t kSortCapacity = 1024;

struct SortProblem {
  uint64_t rows = 0, length = 0;
  bool descending = false;
  // Rows longer than kSortCapacity only: 0, or the count of leading sorted positions wanted (topk): the
  // merges then carry only that many per run, and `out` holds rows * keep positions.
  uint64_t keep = 0;
  DeviceTensorRef out; // int64: positions within the row, in sorted order
  DeviceTensorRef src; // contiguous rows
  // Rows longer than kSortCapacity only: two buffers of rows * length keys (sort_key_dtype) and two
  // of rows * length int32 positions, the merge passes' ping-pong.
  DeviceTensorRef keys[2], positions[2];
};

// Whether a row of `length` elements sorts through runs and merge passes (and needs the scratch).
inline bool sort_merges(uint64_t length) {
  return length > kSortCapacity;
}

// The dtype of the scratch keys of a sort of `type`: int32 words, or int64 for 64-bit values.
c10::ScalarType sort_key_dtype(c10::ScalarType type);

std::string sort_unsupported_reason(runtime::DeviceContext& context, const SortProblem& problem);
void sort_rows(runtime::DeviceContext& context, const SortProblem& problem);

} // namespace torch_dml::kernels
