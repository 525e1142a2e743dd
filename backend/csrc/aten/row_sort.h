// The sorting permutation of contiguous rows, shared by the ops built on the row-sort kernel (sort,
// topk, median, kthvalue, randperm).
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>

namespace torch_dml::aten {

// The int64 stable sorting permutation of each row of `rows` (contiguous, sorted along its last dim,
// NaN last ascending and first descending), only its first `keep` positions per row when keep >= 0, or
// nullopt when the kernel cannot take the operands.
std::optional<at::Tensor> sort_order(const at::Tensor& rows, bool descending, int64_t keep = -1);

} // namespace torch_dml::aten
