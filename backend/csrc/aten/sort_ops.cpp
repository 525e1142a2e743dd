// sort (stable, NaN last ascending and first descending, as on the CPU), argsort (through sort) and
// topk on the row-sort kernel: the sorted dim is moved last and made contiguous, the kernel writes the
// permutation, and the values follow through the element gather. topk sorts the whole row and keeps
// the first k; past the one-workgroup sort its merges carry only the first k of each run, so a small k
// costs little more than sorting the runs. Adapters without shader-int64 go to the counted fallback.
#include <ATen/ATen.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/ops/sort_ops.h>
#include <ATen/ops/topk_ops.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "aten/common.h"
#include "aten/fallback.h"
#include "aten/native_run.h"
#include "aten/row_sort.h"
#include "aten/selection.h"
#include "kernels/sort_kernel.h"

namespace torch_dml::aten {

std::optional<at::Tensor> sort_order(const at::Tensor& rows, bool descending, int64_t keep) {
  const int64_t length = rows.size(-1);
  const int64_t wanted = keep < 0 ? length : std::min(keep, length);
  const bool truncated = kernels::sort_merges(static_cast<uint64_t>(length)) && wanted < length;
  std::vector<int64_t> shape(rows.sizes().begin(), rows.sizes().end());
  shape.back() = truncated ? wanted : length;
  at::Tensor order = at::empty(shape, rows.options().dtype(c10::kLong));
  if (rows.numel() == 0 || wanted == 0) return order.narrow(-1, 0, wanted);
  kernels::SortProblem problem;
  problem.rows = static_cast<uint64_t>(rows.numel() / length);
  problem.length = static_cast<uint64_t>(length);
  problem.descending = descending;
  problem.keep = truncated ? static_cast<uint64_t>(wanted) : 0;
  problem.out = device_ref(order);
  problem.src = device_ref(rows);
  at::Tensor keys, positions;
  if (kernels::sort_merges(problem.length)) {
    keys = at::empty({2, rows.numel()}, rows.options().dtype(kernels::sort_key_dtype(rows.scalar_type())));
    positions = at::empty({2, rows.numel()}, rows.options().dtype(c10::kInt));
    for (int64_t i = 0; i < 2; ++i) {
      problem.keys[i] = device_ref(keys[i]);
      problem.positions[i] = device_ref(positions[i]);
    }
  }
  if (!run_native(context_of(rows), problem, &kernels::sort_unsupported_reason, &kernels::sort_rows))
    return std::nullopt;
  return truncated ? order : order.narrow(-1, 0, wanted);
}

namespace {

// (values, indices) of `self` sorted along `dim` (the first `keep` along it when keep >= 0), or nullopt
// when the kernel cannot.
std::optional<std::tuple<at::Tensor, at::Tensor>> sorted(const at::Tensor& self, int64_t dim, bool descending,
                                                         int64_t keep = -1) {
  const int64_t d = at::maybe_wrap_dim(dim, std::max<int64_t>(self.dim(), 1));
  const at::Tensor rows = self.dim() == 0 ? self.reshape({1}) : self.movedim(d, -1).contiguous();
  if (rows.numel() == 0 || keep == 0) {
    const at::Tensor values = keep >= 0 ? self.narrow(d, 0, keep) : self;
    return std::make_tuple(values.clone(), at::empty(values.sizes(), self.options().dtype(c10::kLong)));
  }
  const std::optional<at::Tensor> sorted_order = sort_order(rows, descending, keep);
  if (!sorted_order) return std::nullopt;
  const at::Tensor order = sorted_order->contiguous();
  const int64_t length = rows.size(-1);
  const int64_t row_count = rows.numel() / length;
  // Row r's element j sits at r * length + order[r, j] in `rows`.
  const at::Tensor row_starts = (at::arange(row_count, order.options()) * length).view({-1, 1});
  const int64_t width = order.size(-1);
  const std::optional<at::Tensor> values = take_linear(rows, (order.view({-1, width}) + row_starts).view(order.sizes()));
  if (!values) return std::nullopt;
  if (self.dim() == 0) return std::make_tuple(values->reshape({}), order.reshape({}));
  return std::make_tuple(values->movedim(-1, d).contiguous(), order.movedim(-1, d).contiguous());
}

// The kernels return (values, indices), or nothing where the row sort does not take the input; the
// out= overloads' outputs are written by the generated kernels (native.yaml: `tries`, `functional`).
std::optional<std::tuple<at::Tensor, at::Tensor>> sort_stable(const at::Tensor& self, std::optional<bool> /*stable*/,
                                                              int64_t dim, bool descending) {
  c10::DeviceGuard guard(self.device());
  return sorted(self, dim, descending);
}

std::optional<std::tuple<at::Tensor, at::Tensor>> top(const at::Tensor& self, int64_t k, int64_t dim, bool largest,
                                                      bool /*is_sorted*/) {
  const int64_t d = at::maybe_wrap_dim(dim, std::max<int64_t>(self.dim(), 1));
  const int64_t size = self.dim() == 0 ? 1 : self.size(d);
  if (k < 0 || k > size) return std::nullopt; // the CPU kernel's error
  c10::DeviceGuard guard(self.device());
  // A 0-dim tensor sorts as itself whatever k, as on the CPU.
  return sorted(self, d, largest, self.dim() == 0 ? -1 : k);
}

// Registered for dml from backend/ops/native.yaml (python -m backend.codegen).
#include "aten/generated/registrations/sort_ops.inc"

} // namespace
} // namespace torch_dml::aten
