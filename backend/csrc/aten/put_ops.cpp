// Assignment at positions: put_linear (kernels/put_kernel.h) under index_put_ and scatter (take_ops.cpp),
// index_copy and index_fill. Every dtype moves as bits; where positions repeat the last write wins (a
// serial loop's rule, which the CPU follows for small inputs), the same on every adapter. Indices are range-checked on the device with one small
// read, as the CPU checks them; the rest (CPU indices for index_copy, int32 without shader-int64...) goes
// to the counted fallback.
#include <ATen/ATen.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/ops/index_copy_ops.h>
#include <ATen/ops/index_fill_ops.h>
#include <ATen/ops/index_reduce_ops.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "aten/common.h"
#include "aten/fallback.h"
#include "aten/native_run.h"
#include "aten/index_groups.h"
#include "aten/selection.h"
#include "aten/word_view.h"
#include "kernels/index_add_kernel.h"
#include "kernels/put_kernel.h"

namespace torch_dml::aten {

bool put_linear(at::Tensor& out, const at::Tensor& linear, const at::Tensor& values) {
  if (linear.numel() == 0) return true;
  const at::Tensor index = linear.reshape({-1}).contiguous();
  const at::Tensor source = values.expand(linear.sizes()).reshape({-1}).contiguous();
  const at::Tensor winner = at::full({out.numel()}, -1, out.options().dtype(c10::kInt));
  const kernels::PutProblem problem{.count = static_cast<uint64_t>(out.numel()),
                                    .sources = static_cast<uint64_t>(index.numel()),
                                    .out = device_ref(out),
                                    .src = device_ref(source),
                                    .index = device_ref(index),
                                    .winner = device_ref(winner)};
  return out.is_contiguous() && source.scalar_type() == out.scalar_type() &&
      run_native(context_of(out), problem, &kernels::put_unsupported_reason, &kernels::put);
}

bool reduce_at_positions(at::Tensor& out, const at::Tensor& linear, const at::Tensor& values,
                         std::string_view reduce, bool include_self) {
  static const std::pair<std::string_view, kernels::IndexFold> folds[] = {
      {"sum", kernels::IndexFold::Sum},  {"prod", kernels::IndexFold::Prod}, {"mean", kernels::IndexFold::Mean},
      {"amax", kernels::IndexFold::Max}, {"amin", kernels::IndexFold::Min}};
  const auto fold = std::find_if(std::begin(folds), std::end(folds), [&](const auto& f) { return f.first == reduce; });
  if (fold == std::end(folds) || !out.is_contiguous() || values.scalar_type() != out.scalar_type()) return false;
  if (linear.numel() == 0) return true;
  const at::Tensor source = values.expand(linear.sizes()).reshape({-1}).contiguous();
  const IndexGroups groups = index_groups(linear, out.numel(), -1);
  kernels::IndexAddProblem problem;
  problem.op = "scatter_reduce";
  problem.fold = fold->second;
  problem.fold_out = include_self;
  problem.sort = groups.sort;
  problem.source = device_ref(source);
  problem.out = device_ref(out);
  return run_native(context_of(out), problem, &kernels::index_add_unsupported_reason, &kernels::index_add);
}

namespace {

// The slice-writing ops and the index rule each follows on the CPU: index_fill counts negative indices
// from the end, index_copy and index_reduce refuse them.
struct SliceOp {
  const char* name; // for errors
  bool negative_indices;
};
constexpr SliceOp kIndexCopy{"index_copy_()", false};
constexpr SliceOp kIndexFill{"index_fill_()", true};
constexpr SliceOp kIndexReduce{"index_reduce_()", false};

// The linear positions, in a contiguous tensor of self's shape, of the slices index selects along dim,
// shaped [outer, index.numel(), inner] (a 0-d self or index counting as 1-d, as the CPU kernels do), or
// nullopt when the native path does not take the index.
std::optional<at::Tensor> slice_positions(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                                          const SliceOp& op) {
  if (index.dim() > 1 || index.device() != self.device() || index.scalar_type() != c10::kLong ||
      !context_of(self).has(runtime::Feature::ShaderInt64))
    return std::nullopt;
  const int64_t d = at::maybe_wrap_dim(dim, std::max<int64_t>(self.dim(), 1));
  const int64_t rows = self.dim() == 0 ? 1 : self.size(d);
  const at::Tensor flat = index.reshape({-1});
  check_ranges({flat}, {op.negative_indices ? -rows : 0}, {rows}, op.name, true);
  const int64_t outer = self.dim() == 0 ? 1 : c10::multiply_integers(self.sizes().slice(0, d));
  const int64_t inner = self.dim() == 0 ? 1 : c10::multiply_integers(self.sizes().slice(d + 1));
  const at::TensorOptions options = flat.options();
  const at::Tensor wrapped = op.negative_indices ? at::where(flat < 0, flat + rows, flat) : flat;
  return axis_offsets(outer, rows * inner, 0, 3, options) + (wrapped * inner).view({1, -1, 1}) +
      axis_offsets(inner, 1, 2, 3, options);
}

// Writes the slices of `source` (index's extent along dim, broadcast to the positions' [outer, n, inner]
// shape) at the rows index names: into self itself when `in_place` and self can take the kernel's
// writes, else into a contiguous copy. The tensor written, or nullopt to fall back (nothing written).
std::optional<at::Tensor> copied_slices(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                                        const at::Tensor& source, const SliceOp& op, bool in_place) {
  if (source.scalar_type() != self.scalar_type() || source.device() != self.device()) return std::nullopt;
  c10::DeviceGuard guard(self.device());
  const std::optional<at::Tensor> positions = slice_positions(self, dim, index, op);
  if (!positions) return std::nullopt;
  if (in_place) {
    at::assert_no_internal_overlap(self);
    at::assert_no_overlap(self, index);
    if (source.dim() > 0) at::assert_no_overlap(self, source);
  }
  const bool direct = in_place && word_addressable(self);
  at::Tensor out = direct ? self : self.clone(at::MemoryFormat::Contiguous);
  if (positions->numel() == 0) return out;
  const at::Tensor values = source.dim() == 0 ? source : source.reshape(positions->sizes());
  if (!word_addressable(out) || !put_linear(out, *positions, values)) return std::nullopt;
  return out;
}

// index_copy's source: self's shape with index's length along dim (0-d counting as 1-d); anything else
// is the CPU kernel's (and its error's).
bool copy_source_fits(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& source) {
  if (std::max<int64_t>(self.dim(), 1) != std::max<int64_t>(source.dim(), 1)) return false;
  const int64_t d = at::maybe_wrap_dim(dim, std::max<int64_t>(self.dim(), 1));
  for (int64_t i = 0; i < self.dim(); ++i)
    if (source.size(i) != (i == d ? index.numel() : self.size(i))) return false;
  return self.dim() > 0 || source.numel() == index.numel();
}

// index_reduce (prod, mean, amax, amin) over the slices index names, with or without self's values.
std::optional<at::Tensor> reduced_slices(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                                         const at::Tensor& source, std::string_view reduce, bool include_self) {
  if (source.scalar_type() != self.scalar_type() || source.device() != self.device() ||
      !copy_source_fits(self, dim, index, source))
    return std::nullopt;
  c10::DeviceGuard guard(self.device());
  const std::optional<at::Tensor> positions = slice_positions(self, dim, index, kIndexReduce);
  if (!positions) return std::nullopt;
  at::Tensor out = self.clone(at::MemoryFormat::Contiguous);
  if (positions->numel() == 0) return out;
  if (!reduce_at_positions(out, *positions, source.reshape(positions->sizes()), reduce, include_self))
    return std::nullopt;
  return out;
}

// Registered for dml from backend/ops/native.yaml (python -m backend.codegen).
#include "aten/generated/registrations/put_ops.inc"

} // namespace
} // namespace torch_dml::aten
