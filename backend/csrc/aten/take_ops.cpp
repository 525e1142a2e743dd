// take, gather, advanced indexing (x[idx], x[:, i, j], x[mask]) and masked_select on the element-gather
// kernel: each turns its indices into linear positions in a contiguous copy of self (native int64
// arithmetic; a boolean mask through nonzero's scan and compaction), and the kernel moves the elements.
// Indices are range-checked with one small read (as index_select does), so a bad index is an
// IndexError, as on the CPU, never an out-of-bounds read. Adapters without shader-int64 and the rest
// go to the counted fallback.
#include <ATen/ATen.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/ops/flip_ops.h>
#include <ATen/ops/_index_put_impl_ops.h>
#include <ATen/ops/gather_ops.h>
#include <ATen/ops/scatter_add_ops.h>
#include <ATen/ops/scatter_ops.h>
#include <ATen/ops/scatter_reduce_ops.h>
#include <ATen/ops/masked_select_ops.h>
#include <ATen/ops/index_ops.h>
#include <ATen/ops/take_ops.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "aten/common.h"
#include "aten/fallback.h"
#include "aten/index_range.h"
#include "aten/native_run.h"
#include "aten/selection.h"
#include "aten/word_view.h"
#include "kernels/take_kernel.h"

namespace torch_dml::aten {

std::optional<at::Tensor> take_linear(const at::Tensor& src, const at::Tensor& linear) {
  at::Tensor out = at::empty(linear.sizes(), src.options());
  if (out.numel() == 0) return out;
  const at::Tensor source = src.contiguous();
  const at::Tensor index = linear.contiguous();
  const kernels::TakeProblem problem{.count = static_cast<uint64_t>(out.numel()),
                                     .src_count = static_cast<uint64_t>(source.numel()),
                                     .out = device_ref(out),
                                     .src = device_ref(source),
                                     .index = device_ref(index)};
  if (!run_native(context_of(src), problem, &kernels::take_unsupported_reason, &kernels::take)) return std::nullopt;
  return out;
}

void check_ranges(const std::vector<at::Tensor>& indices, const std::vector<int64_t>& low,
                  const std::vector<int64_t>& high, const char* op, bool writes) {
  for (size_t i = 0; i < indices.size(); ++i)
    check_index_range(indices[i], low[i], high[i], op,
                      "index {} is out of bounds for size " + std::to_string(high[i]),
                      std::nullopt, writes);
}

at::Tensor axis_offsets(int64_t size, int64_t stride, int64_t axis, int64_t rank, const at::TensorOptions& options,
                        bool reversed) {
  std::vector<int64_t> shape(rank, 1);
  shape[axis] = size;
  const at::Tensor positions = reversed ? at::arange(size - 1, -1, -1, options) : at::arange(size, options);
  return (positions * stride).view(shape);
}

namespace {

bool int64_arithmetic(const at::Tensor& t) {
  return context_of(t).has(runtime::Feature::ShaderInt64);
}

// What every native case needs before its indices are read: int64 indices on self's device, and int64
// arithmetic to linearise them.
bool native_indices(const at::Tensor& self, const at::Tensor& index) {
  return self.device() == index.device() && index.scalar_type() == c10::kLong && int64_arithmetic(self);
}

// Each kernel here returns its result, or nothing for the counted CPU fallback (`functional` and `tries`
// in native.yaml, whose generated kernels also write the out= and in-place overloads' outputs).
using Result = std::optional<at::Tensor>;

Result take_elements(const at::Tensor& self, const at::Tensor& index) {
  if (!native_indices(self, index) || (self.numel() == 0 && index.numel() > 0)) return std::nullopt;
  c10::DeviceGuard guard(self.device());
  check_ranges({index}, {-self.numel()}, {self.numel()}, "take()", false);
  return take_linear(self, at::where(index < 0, index + self.numel(), index));
}

Result gather_elements(const at::Tensor& self, int64_t dim, const at::Tensor& index, bool /*sparse_grad*/) {
  const int64_t d = at::maybe_wrap_dim(dim, std::max<int64_t>(self.dim(), 1));
  bool native = native_indices(self, index) && index.dim() == self.dim() && self.dim() > 0;
  for (int64_t i = 0; native && i < self.dim(); ++i)
    native = i == d || index.size(i) <= self.size(i);
  if (!native) return std::nullopt;
  c10::DeviceGuard guard(self.device());
  check_ranges({index}, {0}, {self.size(d)}, "gather()", false);
  const auto strides = c10::contiguous_strides(self.sizes());
  at::Tensor linear = index * strides[d];
  for (int64_t i = 0; i < self.dim(); ++i)
    if (i != d) linear = linear + axis_offsets(index.size(i), strides[i], i, self.dim(), index.options());
  return take_linear(self, linear);
}

// x[indices]: integer index tensors (broadcast together) select along their dims; dims without an
// index are kept. The selected dims go where the first index is when the indexed dims are adjacent,
// else to the front (NumPy's rule).
// The linear positions, in a contiguous tensor of self's shape, of the elements x[indices] selects,
// shaped as the result; nullopt when an index is not one the native path takes (the caller falls back).
// Integer index tensors (broadcast together) select along their dims and dims without an index are
// kept; a boolean mask over k dims counts as its k coordinate tensors. The selected dims go where the
// first index is when the indexed dims are adjacent, else to the front (NumPy's rule).
std::optional<at::Tensor> indexed_positions(const at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices,
                                            bool writes) {
  std::vector<int64_t> indexed;
  std::vector<at::Tensor> tensors;
  if (self.dim() == 0 || !int64_arithmetic(self)) return std::nullopt;
  int64_t dim = 0;
  for (size_t i = 0; i < indices.size(); ++i) {
    const std::optional<at::Tensor> index = indices[i];
    if (!index || !index->defined()) {
      ++dim;
      continue;
    }
    const c10::ScalarType type = index->scalar_type();
    if ((index->device() != self.device() && !index->is_cpu()) ||
        (type != c10::kLong && type != c10::kInt && type != c10::kBool && type != c10::kByte))
      return std::nullopt;
    const at::Tensor on_device = index->to(self.device()); // CPU indices are allowed, as on CUDA
    if (type == c10::kBool || type == c10::kByte) {
      // A mask over the next mask.dim() dims selects the positions where it is set.
      if (dim + on_device.dim() > self.dim() || !on_device.sizes().equals(self.sizes().slice(dim, on_device.dim())))
        return std::nullopt;
      const std::optional<at::Tensor> positions = set_positions(on_device.reshape({-1}));
      if (!positions) return std::nullopt;
      for (const at::Tensor& coordinate : unravel(*positions, on_device.sizes())) {
        indexed.push_back(dim++);
        tensors.push_back(coordinate);
      }
    } else {
      indexed.push_back(dim++);
      tensors.push_back(on_device);
    }
  }
  if (dim > self.dim() || tensors.empty()) return std::nullopt;
  std::vector<int64_t> low, high;
  for (int64_t d : indexed) {
    low.push_back(-self.size(d));
    high.push_back(self.size(d));
  }
  check_ranges(tensors, low, high, writes ? "index_put" : "index", writes);
  const std::vector<at::Tensor> broadcast = at::broadcast_tensors(tensors);
  const auto strides = c10::contiguous_strides(self.sizes());
  at::Tensor selected;
  for (size_t k = 0; k < indexed.size(); ++k) {
    const int64_t size = self.size(indexed[k]);
    const at::Tensor i = broadcast[k].to(c10::kLong);
    const at::Tensor term = at::where(i < 0, i + size, i) * strides[indexed[k]];
    selected = selected.defined() ? selected + term : term;
  }
  bool adjacent = true;
  for (size_t k = 1; k < indexed.size(); ++k) adjacent = adjacent && indexed[k] == indexed[k - 1] + 1;
  // Result axes: the kept dims in order, with the selection's dims at `at`.
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < self.dim(); ++d)
    if (std::find(indexed.begin(), indexed.end(), d) == indexed.end()) kept.push_back(d);
  const int64_t at = adjacent ? indexed.front() : 0;
  const int64_t selection_rank = selected.dim(), rank = static_cast<int64_t>(kept.size()) + selection_rank;
  std::vector<int64_t> selection_shape(rank, 1);
  for (int64_t j = 0; j < selection_rank; ++j) selection_shape[at + j] = selected.size(j);
  at::Tensor linear = selected.view(selection_shape);
  for (size_t k = 0; k < kept.size(); ++k) {
    const int64_t d = kept[k];
    const int64_t axis = static_cast<int64_t>(k) + (adjacent && d < at ? 0 : selection_rank);
    linear = linear + axis_offsets(self.size(d), strides[d], axis, rank, linear.options());
  }
  return linear;
}

Result index_elements(const at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices) {
  c10::DeviceGuard guard(self.device());
  const std::optional<at::Tensor> linear = indexed_positions(self, indices, false);
  return linear ? take_linear(self, *linear) : std::nullopt;
}

// x.flatten()[linear] += values, every position's terms summed in position order (index_add's
// deterministic kernel, through the dispatcher). x must be contiguous.
void add_at_positions(at::Tensor& contiguous, const at::Tensor& linear, const at::Tensor& values) {
  const PositionsChecked checked; // the caller checked the indices these positions come from
  contiguous.view({-1}).index_add_(0, linear.reshape({-1}), values.expand(linear.sizes()).reshape({-1}));
}

// x[indices] = values (index_put_, the last write winning where positions repeat, as on the CPU) and
// x[indices] += values (with accumulate: the backward of advanced indexing), natively for the indices
// indexed_positions takes.
bool index_put_impl(at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices,
                    const at::Tensor& given_values, bool accumulate, bool /*unsafe*/) {
  // x[mask] = 0 arrives with a 0-d CPU tensor of values (allowed, as on CUDA).
  const bool host_scalar = given_values.dim() == 0 && given_values.is_cpu();
  if (given_values.scalar_type() == self.scalar_type() && (given_values.device() == self.device() || host_scalar)) {
    c10::DeviceGuard guard(self.device());
    const at::Tensor values = host_scalar ? given_values.to(self.device()) : given_values;
    // The CPU kernel's checks: values or indices sharing memory with self are an error, not a race.
    at::assert_no_overlap(self, values);
    for (const std::optional<at::Tensor>& index : indices)
      if (index && index->defined()) at::assert_no_overlap(self, *index);
    if (const std::optional<at::Tensor> linear = indexed_positions(self, indices, true)) {
      at::Tensor target = word_addressable(self) ? self : self.clone(at::MemoryFormat::Contiguous);
      bool done = true;
      if (accumulate) {
        add_at_positions(target, *linear, values);
      } else {
        done = put_linear(target, *linear, values);
      }
      if (done) {
        if (!target.is_same(self)) self.copy_(target);
        return true;
      }
    }
  }
  return false;
}

// self[..., index[i, j], ...] = (or +=) src[i, j] along `dim`, index's extent of src, as on the CPU: the
// linear positions of the writes in a contiguous tensor of self's shape and the values they take, or
// nullopt when the native path does not take the operands.
std::optional<std::pair<at::Tensor, at::Tensor>> scattered_positions(const at::Tensor& self, int64_t d,
                                                                     const at::Tensor& given_index,
                                                                     const at::Tensor& given_src, const char* op) {
  // int32 indices are taken as the CPU takes them; a 0-d self (with 0-d index and src) as a 1-element
  // vector: the positions depend on shapes only, and the result is written in self's own shape.
  const at::Tensor index = given_index.scalar_type() == c10::kInt ? given_index.to(c10::kLong) : given_index;
  const bool scalar = self.dim() == 0 && index.dim() == 0 && given_src.dim() == 0;
  const at::Tensor src = scalar ? given_src.reshape({1}) : given_src;
  if (scalar) return scattered_positions(self.reshape({1}), 0, index.reshape({1}), src, op);
  bool native = native_indices(self, index) && self.dim() > 0 && index.dim() == self.dim() &&
      src.dim() == self.dim() && src.scalar_type() == self.scalar_type() && src.device() == self.device();
  for (int64_t i = 0; native && i < self.dim(); ++i)
    native = index.size(i) <= src.size(i) && (i == d || index.size(i) <= self.size(i));
  if (!native) return std::nullopt;
  check_ranges({index}, {0}, {self.size(d)}, op, true);
  const auto strides = c10::contiguous_strides(self.sizes());
  at::Tensor linear = index * strides[d];
  for (int64_t i = 0; i < self.dim(); ++i)
    if (i != d) linear = linear + axis_offsets(index.size(i), strides[i], i, self.dim(), index.options());
  at::Tensor values = src;
  for (int64_t i = 0; i < self.dim(); ++i) values = values.narrow(i, 0, index.size(i));
  return std::make_pair(linear, values);
}

// scatter_add as one index_add over linear positions.
Result add_scattered(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& src) {
  const int64_t d = at::maybe_wrap_dim(dim, std::max<int64_t>(self.dim(), 1));
  c10::DeviceGuard guard(self.device());
  const auto writes = scattered_positions(self, d, index, src, "scatter_add()");
  if (!writes) return std::nullopt;
  at::Tensor out = self.clone(at::MemoryFormat::Contiguous);
  if (index.numel() > 0) add_at_positions(out, writes->first, writes->second);
  return out;
}

// scatter (src or a value, no reduce) as one put over linear positions: into self itself when `in_place`
// and self takes the kernel's writes, else into a contiguous copy; nullopt falls back.
std::optional<at::Tensor> assign_scattered(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                                           const at::Tensor& src, bool in_place = false) {
  const int64_t d = at::maybe_wrap_dim(dim, std::max<int64_t>(self.dim(), 1));
  c10::DeviceGuard guard(self.device());
  const auto writes = scattered_positions(self, d, index, src, "scatter()");
  if (!writes) return std::nullopt;
  if (in_place) {
    at::assert_no_internal_overlap(self);
    at::assert_no_overlap(self, index);
    at::assert_no_overlap(self, src);
  }
  const bool direct = in_place && word_addressable(self);
  at::Tensor out = direct ? self : self.clone(at::MemoryFormat::Contiguous);
  if (index.numel() == 0 || put_linear(out, writes->first, writes->second)) return out;
  return std::nullopt;
}

// scatter_reduce.two: each position folds the values scattered to it (with self's value when
// include_self) in position order, the same bits every run.
std::optional<at::Tensor> reduce_scattered(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                                           const at::Tensor& src, std::string_view reduce, bool include_self) {
  const int64_t d = at::maybe_wrap_dim(dim, std::max<int64_t>(self.dim(), 1));
  c10::DeviceGuard guard(self.device());
  const auto writes = scattered_positions(self, d, index, src, "scatter_reduce()");
  if (!writes) return std::nullopt;
  at::Tensor out = self.clone(at::MemoryFormat::Contiguous);
  if (index.numel() == 0 || reduce_at_positions(out, writes->first, writes->second, reduce, include_self)) return out;
  return std::nullopt;
}

// The value overloads scatter a 0-d tensor broadcast to index's shape (never materialised per element
// of self: put_linear expands it).
at::Tensor value_source(const at::Tensor& self, const at::Tensor& index, const at::Scalar& value) {
  return at::scalar_tensor(value, self.options()).expand(index.sizes());
}

// flip as a gather through reversed coordinates (cumsum's backward flips, as do augmentations).
Result flipped(const at::Tensor& self, at::IntArrayRef dims) {
  if (self.dim() == 0 || !int64_arithmetic(self)) return std::nullopt;
  c10::DeviceGuard guard(self.device());
  std::vector<bool> flipped(self.dim(), false);
  for (int64_t d : dims) flipped[at::maybe_wrap_dim(d, self.dim())] = true;
  const auto strides = c10::contiguous_strides(self.sizes());
  const at::TensorOptions options = self.options().dtype(c10::kLong);
  at::Tensor linear = at::zeros(std::vector<int64_t>(self.dim(), 1), options);
  for (int64_t d = 0; d < self.dim(); ++d) {
    linear = linear + axis_offsets(self.size(d), strides[d], d, self.dim(), options, flipped[d]);
  }
  return take_linear(self, linear);
}

Result select_by_mask(const at::Tensor& self, const at::Tensor& mask) {
  if (mask.scalar_type() != c10::kBool || mask.device() != self.device() || !int64_arithmetic(self))
    return std::nullopt;
  c10::DeviceGuard guard(self.device());
  const std::vector<at::Tensor> both = at::broadcast_tensors({self, mask});
  const std::optional<at::Tensor> positions = set_positions(both[1].reshape({-1}));
  return positions ? take_linear(both[0], *positions) : std::nullopt;
}

// Registered for dml from backend/ops/native.yaml (python -m backend.codegen).
#include "aten/generated/registrations/take_ops.inc"

} // namespace
} // namespace torch_dml::aten
