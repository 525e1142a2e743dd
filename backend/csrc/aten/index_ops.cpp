// index_select (and embedding, which is index_select on the weight) on the row-gather kernel; rows that
// are not whole 32-bit words (1- and 2-byte dtypes) on the element gather of take.
// Indices are range-checked on the device without a wait (aten/index_range.h): a bad index raises
// IndexError at the next wait, and the gather's loads meanwhile stay inside the bound buffers (WebGPU
// clamps them).
#include <ATen/ATen.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/index_select_ops.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "aten/common.h"
#include "aten/fallback.h"
#include "aten/index_range.h"
#include "aten/selection.h"
#include "kernels/gather_kernel.h"

namespace torch_dml::aten {
namespace {

// out <- the rows of self (along dim) that index names; false, with nothing written, where the kernels do
// not take the operands (native.yaml: `tries`).
bool select_rows(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& out) {
  // A 0-d self is a 1-element vector, and its result 0-d, as on the CPU.
  if (self.dim() == 0 && index.numel() == 1 && index.device() == self.device()) {
    at::Tensor vector_result = at::empty({0}, out.options());
    if (!select_rows(self.reshape({1}), 0, index.reshape({1}), vector_result)) return false;
    assign_out(out, vector_result.reshape({}));
    return true;
  }
  const int64_t wrapped = at::maybe_wrap_dim(dim, std::max<int64_t>(self.dim(), 1));
  const int64_t trailing = self.dim() == 0 ? 1 : c10::multiply_integers(self.sizes().slice(wrapped + 1));
  const bool word_rows = (trailing * self.element_size()) % 4 == 0;
  const bool index_ok = (index.scalar_type() == c10::kLong || index.scalar_type() == c10::kInt) &&
      index.device() == self.device() && index.dim() <= 1;
  const bool element_gather = !word_rows && index.scalar_type() == c10::kLong &&
      context_of(self).has(runtime::Feature::ShaderInt64);
  if (!(word_rows || element_gather) || !index_ok || self.dim() == 0 || out.scalar_type() != self.scalar_type())
    return false;
  c10::DeviceGuard guard(self.device());
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().end());
  shape[wrapped] = index.numel();
  at::native::resize_output(out, shape);
  if (out.numel() == 0) return true;
  const int64_t rows = self.size(wrapped);
  const at::Tensor flat_index = index.reshape({-1}).contiguous();
  check_index_range(flat_index, 0, rows, "index_select", "index {} is out of range in self");
  if (element_gather) {
    // Rows that are not whole words (a 1- or 2-byte dtype with an odd row): the element gather moves
    // each element from its linear position, [outer, index, trailing].
    const at::TensorOptions options = flat_index.options();
    const int64_t outer = c10::multiply_integers(self.sizes().slice(0, wrapped));
    const at::Tensor linear = (at::arange(outer, options) * (rows * trailing)).view({-1, 1, 1}) +
        (flat_index * trailing).view({1, -1, 1}) + at::arange(trailing, options).view({1, 1, -1});
    if (const std::optional<at::Tensor> gathered = take_linear(self, linear)) {
      out.copy_(gathered->view(shape));
      return true;
    }
    return false;
  }
  at::Tensor source = self.contiguous();
  // Word addressing needs the first row on a word boundary; a fresh copy always starts on one.
  if (device_ref(source).element_offset * source.element_size() % 4 != 0) source = self.clone();
  const bool direct = out.is_contiguous();
  at::Tensor target = direct ? out : at::empty(shape, out.options());
  kernels::GatherProblem problem;
  problem.outer = static_cast<uint64_t>(c10::multiply_integers(self.sizes().slice(0, wrapped)));
  problem.source_rows = static_cast<uint64_t>(rows);
  problem.count = static_cast<uint64_t>(flat_index.numel());
  problem.row_words = static_cast<uint64_t>(trailing * self.element_size() / 4);
  // Address both sides in 32-bit words: rows are whole words, and every storage starts word-aligned.
  auto as_words = [](const at::Tensor& t) {
    kernels::DeviceTensorRef ref = device_ref(t);
    const uint64_t byte_offset = ref.element_offset * t.element_size();
    TORCH_INTERNAL_ASSERT(byte_offset % 4 == 0);
    ref.element_offset = byte_offset / 4;
    ref.dtype = c10::kInt;
    return ref;
  };
  problem.out = as_words(target);
  problem.self = as_words(source);
  problem.index = device_ref(flat_index);
  runtime::DeviceContext& context = context_of(self);
  const std::string reason = kernels::gather_unsupported_reason(context, problem);
  if (!reason.empty()) return false;
  {
    std::lock_guard<std::recursive_mutex> lock(context.mutex());
    kernels::gather_rows(context, problem);
  }
  if (!direct) out.copy_(target);
  return true;
}

std::optional<at::Tensor> select_new_rows(const at::Tensor& self, int64_t dim, const at::Tensor& index) {
  c10::DeviceGuard guard(self.device());
  const at::Tensor out = at::empty({0}, self.options());
  return select_rows(self, dim, index, out) ? std::optional<at::Tensor>(out) : std::nullopt;
}

// Registered for dml from backend/ops/native.yaml (python -m backend.codegen).
#include "aten/generated/registrations/index_ops.inc"

} // namespace
} // namespace torch_dml::aten
