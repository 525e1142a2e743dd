// torch.cat as native copies: each input is copied (with dtype promotion) into its slice of the output.
#include <ATen/ExpandUtils.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/native/Resize.h>
#include <ATen/native/TypeProperties.h>
#include <ATen/ops/cat_ops.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "aten/common.h"
#include "aten/fallback.h"

namespace torch_dml::aten {
namespace {

// PyTorch keeps accepting 1-D empty tensors as "no contribution" in cat, whatever their shape.
bool skipped(const at::Tensor& t) {
  return t.dim() == 1 && t.numel() == 0;
}

at::Tensor& cat_out(const at::ITensorListRef& tensors, int64_t dim, at::Tensor& out) {
  const auto materialized = tensors.materialize();
  TORCH_CHECK(!materialized.empty(), "torch.cat(): expected a non-empty list of Tensors");
  const at::Tensor* reference = nullptr;
  for (const at::Tensor& t : materialized) {
    TORCH_CHECK(t.device() == out.device(), "torch.cat(): all input tensors and out must be on the same device, got ",
                t.device(), " and ", out.device());
    if (!skipped(t) && !reference) reference = &t;
  }
  if (!reference) {
    at::native::resize_output(out, {0});
    return out;
  }
  const int64_t wrapped = at::maybe_wrap_dim(dim, reference->dim());
  std::vector<int64_t> shape(reference->sizes().begin(), reference->sizes().end());
  int64_t total = 0;
  for (const at::Tensor& t : materialized) {
    if (skipped(t)) continue;
    TORCH_CHECK(t.dim() == reference->dim(), "Tensors must have same number of dimensions: got ", reference->dim(),
                " and ", t.dim());
    for (int64_t d = 0; d < t.dim(); ++d)
      TORCH_CHECK(d == wrapped || t.size(d) == shape[d], "Sizes of tensors must match except in dimension ", wrapped,
                  ". Expected size ", shape[d], " but got size ", t.size(d), " for tensor number in the list.");
    total += t.size(wrapped);
  }
  shape[wrapped] = total;
  const c10::ScalarType promoted = at::native::result_type(tensors);
  TORCH_CHECK(c10::canCast(promoted, out.scalar_type()), "torch.cat(): input types can't be cast to the desired "
              "output type ", out.scalar_type());
  // Inputs that alias the output would be overwritten before they are read.
  for (const at::Tensor& t : materialized)
    TORCH_CHECK(!t.defined() || !out.defined() || out.numel() == 0 || !t.storage().is_alias_of(out.storage()),
                "torch.cat(): unsupported operation: the input tensors cannot refer to any of the output memory locations");
  at::native::resize_output(out, shape);
  c10::DeviceGuard guard(out.device());
  int64_t offset = 0;
  for (const at::Tensor& t : materialized) {
    if (skipped(t)) continue;
    const int64_t length = t.size(wrapped);
    if (length) out.narrow(wrapped, offset, length).copy_(t);
    offset += length;
  }
  return out;
}

// Registered for dml from backend/ops/native.yaml (python -m backend.codegen).
#include "aten/generated/registrations/cat_ops.inc"

} // namespace
} // namespace torch_dml::aten
