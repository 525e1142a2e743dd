// torch.unique (sorted) and torch.unique_consecutive over the flattened input, composed from dml ops:
// a stable sort (unique only), a flag where each run of equal values starts (NaN equals nothing, so
// each NaN is its own value, as on the CPU), the flagged values (masked_select: the one wait, for the
// count of values), the running count of flags as each element's value number (scattered back through
// the sort's permutation for the inverse) and each value's count as an index_add of ones. Unsorted
// unique (whose order the CPU leaves to its hash set) and unique over a dim stay on the CPU.
#include <ATen/ATen.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/ops/_unique2_ops.h>
#include <ATen/ops/_unique_ops.h>
#include <ATen/ops/unique_consecutive_ops.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <tuple>

#include "aten/common.h"
#include "aten/dtype_rule.h"
#include "aten/fallback.h"
#include "aten/index_range.h"

namespace torch_dml::aten {
namespace {

using Unique = std::tuple<at::Tensor, at::Tensor, at::Tensor>;

// `values` (flat, runs of equal values adjacent) split into runs: each run's value, each element's
// run number, and each run's length.
Unique runs(const at::Tensor& values, const at::Tensor& self, bool return_inverse, bool return_counts,
            const at::Tensor& permutation) {
  const int64_t n = values.numel();
  const auto long_options = self.options().dtype(c10::kLong);
  if (n == 0)
    return {at::empty({0}, self.options()), at::empty(return_inverse ? self.sizes() : at::IntArrayRef{0}, long_options),
            at::empty({0}, long_options)};
  at::Tensor starts = at::ones({n}, self.options().dtype(c10::kBool));
  if (n > 1) starts.narrow(0, 1, n - 1).copy_(at::ne(values.narrow(0, 1, n - 1), values.narrow(0, 0, n - 1)));
  const at::Tensor unique = values.masked_select(starts);
  at::Tensor inverse = at::empty({0}, long_options), counts = at::empty({0}, long_options);
  if (return_inverse || return_counts) {
    const at::Tensor run = starts.cumsum(0).sub_(1);
    PositionsChecked checked; // run numbers lie in [0, unique.numel()), the permutation is one
    if (return_inverse)
      inverse = permutation.defined() ? at::empty({n}, long_options).scatter_(0, permutation, run).view(self.sizes())
                                      : run.view(self.sizes());
    if (return_counts) counts = at::zeros({unique.numel()}, long_options).index_add_(0, run, at::ones({n}, long_options));
  }
  return {unique, inverse, counts};
}

// torch.unique's sorted form (the default, and what CUDA always gives).
Unique unique_sorted(const at::Tensor& self, bool /*sorted*/, bool return_inverse, bool return_counts) {
  c10::DeviceGuard guard(self.device());
  const at::Tensor flat = self.reshape({-1});
  if (flat.numel() == 0) return runs(flat, self, return_inverse, return_counts, at::Tensor());
  const auto [values, permutation] = at::sort(flat, true, 0, false);
  return runs(values, self, return_inverse, return_counts, permutation);
}

// The older overload (index_fill's backward calls it, for a sum the order cannot change): values and
// inverse, sorted even when not asked (an order the CPU leaves unspecified then).
std::tuple<at::Tensor, at::Tensor> unique_values(const at::Tensor& self, bool /*sorted*/, bool return_inverse) {
  auto [values, inverse, counts] = unique_sorted(self, true, return_inverse, false);
  return {values, inverse};
}

Unique consecutive(const at::Tensor& self, bool return_inverse, bool return_counts, std::optional<int64_t> /*dim*/) {
  c10::DeviceGuard guard(self.device());
  return runs(self.reshape({-1}), self, return_inverse, return_counts, at::Tensor());
}

// Registered for dml from backend/ops/native.yaml (python -m backend.codegen).
#include "aten/generated/registrations/unique_ops.inc"

} // namespace
} // namespace torch_dml::aten
