// roll (shifted windows in Swin-style attention, fftshift) as the element gather through rolled
// coordinates, for every dtype; eye as a comparison of two aranges, so neither leaves the device.
#include <ATen/ATen.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/ops/eye_ops.h>
#include <ATen/ops/roll_ops.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "aten/common.h"
#include "aten/dtype_rule.h"
#include "aten/fallback.h"
#include "aten/selection.h"

namespace torch_dml::aten {
namespace {

// The source coordinate of every coordinate along a dim of `size` rolled by `shift` (host side: one
// short vector per dim, the remainder taken here where the sign of `%` is defined).
std::vector<int64_t> rolled_sources(int64_t size, int64_t shift) {
  std::vector<int64_t> sources(size);
  const int64_t s = ((shift % size) + size) % size;
  for (int64_t i = 0; i < size; ++i) sources[i] = (i - s + size) % size;
  return sources;
}

// A gather through rolled coordinates; nothing where the shifts do not match the dims (the CPU's error) or
// the gather does not take the input (native.yaml: `tries`).
std::optional<at::Tensor> rolled(const at::Tensor& self, at::IntArrayRef shifts, at::IntArrayRef dims) {
  const bool flat = dims.empty();
  if (flat ? shifts.size() != 1 : shifts.size() != dims.size()) return std::nullopt;
  c10::DeviceGuard guard(self.device());
  if (self.numel() == 0) return self.clone();
  const at::Tensor source = flat ? self.reshape({-1}) : self;
  std::vector<int64_t> shift_of(source.dim(), 0);
  for (size_t k = 0; k < shifts.size(); ++k) {
    const int64_t d = flat ? 0 : at::maybe_wrap_dim(dims[k], source.dim());
    shift_of[d] += shifts[k];
  }
  const auto strides = c10::contiguous_strides(source.sizes());
  const at::TensorOptions options = at::TensorOptions().dtype(c10::kLong);
  at::Tensor linear = at::zeros(std::vector<int64_t>(source.dim(), 1), options.device(self.device()));
  for (int64_t d = 0; d < source.dim(); ++d) {
    std::vector<int64_t> shape(source.dim(), 1);
    shape[d] = source.size(d);
    const at::Tensor coordinates = at::tensor(rolled_sources(source.size(d), shift_of[d]), options).to(self.device());
    linear = linear + (coordinates * strides[d]).view(shape);
  }
  const std::optional<at::Tensor> out = take_linear(source, linear);
  return out ? std::optional<at::Tensor>(out->view(self.sizes())) : std::nullopt;
}

at::Tensor& eye_out(int64_t n, int64_t m, at::Tensor& out) {
  TORCH_CHECK(n >= 0, "n must be greater or equal to 0, got ", n);
  TORCH_CHECK(m >= 0, "m must be greater or equal to 0, got ", m);
  c10::DeviceGuard guard(out.device());
  const at::TensorOptions options = out.options().dtype(c10::kLong);
  assign_out(out, at::arange(n, options).view({-1, 1}).eq(at::arange(m, options).view({1, -1})).to(out.scalar_type()));
  return out;
}

at::Tensor& eye_square_out(int64_t n, at::Tensor& out) {
  return eye_out(n, n, out);
}

// Registered for dml from backend/ops/native.yaml (python -m backend.codegen).
#include "aten/generated/registrations/roll_eye_ops.inc"

} // namespace
} // namespace torch_dml::aten
