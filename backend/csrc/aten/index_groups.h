// The device scratch of the counting sort of positions by index (kernels/index_sort_kernel.h) that
// index_add and embedding_dense_backward sum over.
#pragma once

#include <ATen/core/Tensor.h>

#include "kernels/index_sort_kernel.h"

namespace torch_dml::aten {

struct IndexGroups {
  at::Tensor index, counts, ends, order; // alive until the kernels are recorded
  kernels::IndexSortProblem sort;
};

// `indices` (int32 or int64, any shape, on the device) grouped into `buckets` groups, `skip` (or -1)
// left out.
IndexGroups index_groups(const at::Tensor& indices, int64_t buckets, int64_t skip);

} // namespace torch_dml::aten
