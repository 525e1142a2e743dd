// Positions of an index tensor grouped by the index they hold, ascending within each group: a
// counting sort on the device (atomic histogram, one-workgroup exclusive scan, one-workgroup stable
// placement). Nothing in it is a float and nothing depends on the order threads run in, so a kernel
// that sums each group in `order` (embedding backward, index_add) gives the same bits every run.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/tensor_ref.h"
#include "runtime/device.h"

namespace torch_dml::kernels {

struct IndexSortProblem {
  uint64_t positions = 0; // indices
  uint64_t buckets = 0;   // indices in [0, buckets) have a group; the others are left out
  int64_t skip = -1;      // an index left out too (embedding's padding_idx), or -1
  DeviceTensorRef index;  // int32 or int64, contiguous
  DeviceTensorRef counts; // int32 [buckets], zero-filled by the caller: positions per group
  DeviceTensorRef ends;   // int32 [buckets]: one past each group's last slot in `order`
  DeviceTensorRef order;  // int32 [positions]: the grouped positions (slots past the groups: unset)
};

std::string index_sort_unsupported_reason(runtime::DeviceContext& context, const IndexSortProblem& problem);
void sort_positions_by_index(runtime::DeviceContext& context, const IndexSortProblem& problem);

} // namespace torch_dml::kernels
