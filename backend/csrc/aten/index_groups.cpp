#include "aten/index_groups.h"

#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>

#include "aten/common.h"

namespace torch_dml::aten {

IndexGroups index_groups(const at::Tensor& indices, int64_t buckets, int64_t skip) {
  IndexGroups groups;
  groups.index = indices.reshape({-1}).contiguous();
  const at::TensorOptions int32 = indices.options().dtype(c10::kInt);
  groups.counts = at::zeros({buckets}, int32);
  groups.ends = at::empty({buckets}, int32);
  groups.order = at::empty({groups.index.numel()}, int32);
  kernels::IndexSortProblem& sort = groups.sort;
  sort.positions = static_cast<uint64_t>(groups.index.numel());
  sort.buckets = static_cast<uint64_t>(buckets);
  sort.skip = skip;
  sort.index = device_ref(groups.index);
  sort.counts = device_ref(groups.counts);
  sort.ends = device_ref(groups.ends);
  sort.order = device_ref(groups.order);
  return groups;
}

} // namespace torch_dml::aten
