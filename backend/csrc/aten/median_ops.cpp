// median, nanmedian and kthvalue (with and without dim) as one element picked from each sorted row: the
// dim is moved last and made contiguous, the row-sort kernel gives the stable ascending order (NaN
// last), and a device tensor of sorted positions picks each row's element, so nothing is read back.
// The positions follow the CPU kernels: median takes the lower median, (n - 1) / 2, or the first NaN
// of a row holding any (its value and index); nanmedian takes the lower median of the row's non-NaN
// values, (n - nan - 1) / 2, position 0 when all are NaN; kthvalue takes position k - 1. Ties pick the
// lowest index, which is the CPU's median index; the CPU's kthvalue (a quickselect) may return another
// index of an equal value. Empty inputs, bool and the adapters the sort kernel cannot serve go to the
// counted fallback, which raises PyTorch's own errors where there are any.
#include <ATen/ATen.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/ops/kthvalue_ops.h>
#include <ATen/ops/median_ops.h>
#include <ATen/ops/nanmedian_ops.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "aten/common.h"
#include "aten/fallback.h"
#include "aten/row_sort.h"
#include "aten/selection.h"

namespace torch_dml::aten {
namespace {

enum class Pick { Median, NanMedian, Kth };

// The sorted position each row's pick sits at: int64 [rows].
at::Tensor pick_positions(const at::Tensor& rows, Pick pick, int64_t k) {
  const int64_t length = rows.size(-1);
  const at::TensorOptions positions = rows.options().dtype(c10::kLong);
  if (pick == Pick::Kth) return at::full({rows.size(0)}, k - 1, positions);
  if (!at::isFloatingType(rows.scalar_type())) return at::full({rows.size(0)}, (length - 1) / 2, positions);
  const at::Tensor nans = at::isnan(rows).to(c10::kLong).sum(-1);
  if (pick == Pick::Median)
    return at::where(nans > 0, at::full({}, length, positions) - nans, at::full({}, (length - 1) / 2, positions));
  return at::floor_divide(at::full({}, length - 1, positions) - nans, 2).clamp_min_(0);
}

// (values, indices) of the pick along `dim`, shaped as a reduction over it; nullopt when the kernel
// cannot take `self`.
std::optional<std::tuple<at::Tensor, at::Tensor>> picked(const at::Tensor& self, int64_t dim, bool keepdim, Pick pick,
                                                         int64_t k = 0) {
  if (self.numel() == 0 || self.scalar_type() == c10::kBool) return std::nullopt;
  const int64_t d = at::maybe_wrap_dim(dim, std::max<int64_t>(self.dim(), 1));
  const at::Tensor moved = self.dim() == 0 ? self.reshape({1}) : self.movedim(d, -1);
  const int64_t length = moved.size(-1);
  const at::Tensor rows = moved.contiguous().view({-1, length});
  // kthvalue needs only the first k of each sorted row (the sort then merges only those).
  const std::optional<at::Tensor> order = sort_order(rows, false, pick == Pick::Kth ? k : -1);
  if (!order) return std::nullopt;
  const at::Tensor row_numbers = at::arange(rows.size(0), order->options());
  const std::optional<at::Tensor> indices =
      take_linear(*order, row_numbers * order->size(-1) + pick_positions(rows, pick, k));
  if (!indices) return std::nullopt;
  const std::optional<at::Tensor> values = take_linear(rows, row_numbers * length + *indices);
  if (!values) return std::nullopt;
  std::vector<int64_t> shape(moved.sizes().begin(), moved.sizes().end() - 1);
  at::Tensor v = values->view(shape), i = indices->view(shape);
  if (keepdim && self.dim() > 0) {
    v = v.unsqueeze(d);
    i = i.unsqueeze(d);
  }
  return std::make_tuple(v, i);
}

// The kernels return the values (and indices), or nothing where the sort kernels do not take the input;
// the dim overloads' outputs are written by the generated kernels.
std::optional<at::Tensor> median_all(const at::Tensor& self, Pick pick) {
  c10::DeviceGuard guard(self.device());
  auto result = picked(self.reshape({-1}), 0, false, pick);
  return result ? std::optional<at::Tensor>(std::get<0>(*result).reshape({})) : std::nullopt;
}

std::optional<std::tuple<at::Tensor, at::Tensor>> median_dim(const at::Tensor& self, int64_t dim, bool keepdim,
                                                             Pick pick) {
  c10::DeviceGuard guard(self.device());
  return picked(self, dim, keepdim, pick);
}

std::optional<std::tuple<at::Tensor, at::Tensor>> kth_value(const at::Tensor& self, int64_t k, int64_t dim,
                                                            bool keepdim) {
  c10::DeviceGuard guard(self.device());
  const int64_t d = at::maybe_wrap_dim(dim, std::max<int64_t>(self.dim(), 1));
  const int64_t size = self.dim() == 0 ? 1 : self.size(d);
  // Out-of-range k reaches the CPU kernel, which raises its own error.
  if (k < 1 || k > size) return std::nullopt;
  return picked(self, d, keepdim, Pick::Kth, k);
}

// The out= forms the dim overloads are composed from: CPU checks the outputs' dtypes the same way.
bool outputs_fit(const at::Tensor& self, const at::Tensor& values, const at::Tensor& indices) {
  return values.scalar_type() == self.scalar_type() && indices.scalar_type() == c10::kLong &&
      values.device() == self.device() && indices.device() == self.device();
}

// Registered for dml from backend/ops/native.yaml (python -m backend.codegen).
#include "aten/generated/registrations/median_ops.inc"

} // namespace
} // namespace torch_dml::aten
