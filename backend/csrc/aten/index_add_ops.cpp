// index_add (functional, in-place, out=) on the device for float32/float16/bfloat16/float64, the
// integers (int64 with shader-int64) and bool, the same bits every run: the positions are grouped by
// index and each element adds its group's terms in position order, the CPU's order
// (kernels/index_add_kernel.h), so float32/float64 with alpha 1 equal the CPU bit for bit. Complex
// (and uint16-64, which the CPU refuses too) and shapes the kernel does not take go to the CPU,
// counted.
// Indices are range-checked on the device without a wait (aten/index_range.h), raising IndexError at
// the next wait.
#include <ATen/WrapDimUtils.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/index_add_ops.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "aten/common.h"
#include "aten/index_range.h"
#include "aten/fallback.h"
#include "aten/index_groups.h"
#include "aten/word_view.h"
#include "kernels/index_add_kernel.h"

namespace torch_dml::aten {
namespace {

// A 0-d tensor is indexed as a 1-element vector, as the CPU kernel does.
c10::IntArrayRef sizes_of(const at::Tensor& t) {
  static const int64_t one = 1;
  return t.dim() == 0 ? c10::IntArrayRef(&one, 1) : t.sizes();
}

// The shapes the kernel takes: a 0-d or 1-d int32/int64 index on the device, and a source of self's
// rank (0-d counting as 1-d) and dtype whose sizes equal self's except along dim, where they are the
// index's length. The rest (and their errors) are the CPU kernel's.
bool kernel_takes(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& source) {
  const c10::IntArrayRef self_sizes = sizes_of(self), source_sizes = sizes_of(source);
  if (source_sizes.size() != self_sizes.size() || index.dim() > 1 || index.device() != self.device() ||
      (index.scalar_type() != c10::kLong && index.scalar_type() != c10::kInt) ||
      source.scalar_type() != self.scalar_type() || source.device() != self.device() ||
      !(at::isFloatingType(self.scalar_type()) || self.scalar_type() == c10::kInt ||
        self.scalar_type() == c10::kLong || self.scalar_type() == c10::kShort || self.scalar_type() == c10::kChar ||
        self.scalar_type() == c10::kByte || self.scalar_type() == c10::kBool))
    return false;
  for (size_t d = 0; d < self_sizes.size(); ++d)
    if (source_sizes[d] != (static_cast<int64_t>(d) == dim ? index.numel() : self_sizes[d])) return false;
  return true;
}

// out <- self with alpha * source's slices added at index along dim; false where the kernel does not take
// the operands (native.yaml: `tries`): out may hold self's copy by then, which the fallback overwrites.
bool add_slices(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& source,
                const at::Scalar& alpha, const at::Tensor& out) {
  const int64_t wrapped = at::maybe_wrap_dim(dim, std::max<int64_t>(self.dim(), 1));
  if (!kernel_takes(self, wrapped, index, source) || out.scalar_type() != self.scalar_type())
    return false;
  c10::DeviceGuard guard(self.device());
  const c10::IntArrayRef shape = sizes_of(self);
  const int64_t rows = shape[wrapped];
  check_index_range(index, 0, rows, "index_add",
                    "index {} is out of bounds for dimension " + std::to_string(wrapped) + " with size " +
                        std::to_string(rows),
                    std::nullopt, out.is_same(self), false);
  if (!out.is_same(self)) {
    at::native::resize_output(out, self.sizes());
    out.copy_(self);
  }
  if (out.numel() == 0 || index.numel() == 0) return true;
  const bool direct = word_addressable(out);
  at::Tensor target = direct ? out : out.clone(at::MemoryFormat::Contiguous);
  const at::Tensor contiguous_source = source.contiguous();
  const IndexGroups groups = index_groups(index, rows, -1);
  kernels::IndexAddProblem problem;
  problem.outer = static_cast<uint64_t>(c10::multiply_integers(shape.slice(0, wrapped)));
  problem.inner = static_cast<uint64_t>(c10::multiply_integers(shape.slice(wrapped + 1)));
  problem.alpha = alpha;
  problem.sort = groups.sort;
  problem.source = device_ref(contiguous_source);
  problem.out = device_ref(target);
  runtime::DeviceContext& context = context_of(self);
  if (!kernels::index_add_unsupported_reason(context, problem).empty())
    return false;
  {
    std::lock_guard<std::recursive_mutex> lock(context.mutex());
    kernels::index_add(context, problem);
  }
  if (!direct) out.copy_(target);
  return true;
}

std::optional<at::Tensor> added_slices(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                                       const at::Tensor& source, const at::Scalar& alpha) {
  c10::DeviceGuard guard(self.device());
  const at::Tensor out = at::empty({0}, self.options());
  return add_slices(self, dim, index, source, alpha, out) ? std::optional<at::Tensor>(out) : std::nullopt;
}

// Registered for dml from backend/ops/native.yaml (python -m backend.codegen).
#include "aten/generated/registrations/index_add_ops.inc"

} // namespace
} // namespace torch_dml::aten
