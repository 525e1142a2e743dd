// avg_pool2d and adaptive_avg_pool2d, forward and backward, one kernel each way (kernels/pool2d_kernel.h):
// each output sums its window in the CPU's order and divides as the CPU does (every divisor rule:
// count_include_pad, ceil_mode windows clipped at the padded edge, divisor_override; adaptive windows
// divided by their height, then their width), and the backward gathers into each input element the
// shares of the outputs whose windows hold it. Any layout is read and written in place; a 16-bit dtype
// is computed in float32 and rounded once. Adaptive pooling to 1 x 1 (global average pooling) is the
// mean reduction instead: one thread per output would walk a whole feature map. What the kernels
// decline (float64 without shader-f64, extents past their 32-bit arithmetic), and arguments the CPU
// refuses, go to the counted CPU fallback, which raises PyTorch's errors, before anything is written.
#include <ATen/ATen.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/native/Pool.h>
#include <ATen/ops/_adaptive_avg_pool2d_backward_ops.h>
#include <ATen/ops/_adaptive_avg_pool2d_ops.h>
#include <ATen/ops/avg_pool2d_backward_ops.h>
#include <ATen/ops/avg_pool2d_ops.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <optional>
#include <vector>

#include "aten/common.h"
#include "aten/dtype_rule.h"
#include "aten/fallback.h"
#include "aten/pool_tensors.h"
#include "kernels/pool2d_kernel.h"

namespace torch_dml::aten {
namespace {

// An image or a batch of them (the dtypes are native.yaml's rule).
bool image_rank(const at::Tensor& t) {
  return t.dim() == 3 || t.dim() == 4;
}

// avg_pool2d's geometry for a 4-D input, or nothing for arguments the CPU refuses (it raises them).
std::optional<kernels::Pool2dGeometry> avg_geometry(const at::Tensor& x, at::IntArrayRef kernel_size,
                                                    at::IntArrayRef stride, at::IntArrayRef padding, bool ceil_mode,
                                                    std::optional<int64_t> divisor_override) {
  if (kernel_size.empty() || kernel_size.size() > 2 || stride.size() > 2 || padding.empty() || padding.size() > 2 ||
      (divisor_override && *divisor_override == 0))
    return std::nullopt;
  const int64_t kh = kernel_size[0], kw = kernel_size.size() == 1 ? kh : kernel_size[1];
  const int64_t sh = stride.empty() ? kh : stride[0], sw = stride.empty() ? kw : stride.size() == 1 ? sh : stride[1];
  const int64_t ph = padding[0], pw = padding.size() == 1 ? ph : padding[1];
  if (kh <= 0 || kw <= 0 || sh <= 0 || sw <= 0 || ph < 0 || pw < 0 || ph * 2 > kh || pw * 2 > kw) return std::nullopt;
  kernels::Pool2dGeometry g;
  g.batch = x.size(0), g.channels = x.size(1), g.in_h = x.size(2), g.in_w = x.size(3);
  const int64_t oh = at::native::pooling_output_shape<int64_t>(x.size(2), kh, ph, sh, 1, ceil_mode);
  const int64_t ow = at::native::pooling_output_shape<int64_t>(x.size(3), kw, pw, sw, 1, ceil_mode);
  if (oh <= 0 || ow <= 0 || x.size(2) == 0 || x.size(3) == 0) return std::nullopt;
  g.out_h = oh, g.out_w = ow;
  g.kernel[0] = kh, g.kernel[1] = kw, g.stride[0] = sh, g.stride[1] = sw, g.padding[0] = ph, g.padding[1] = pw;
  return g;
}

// The pooled sizes of `self` (3-D or 4-D) for geometry `g`.
std::vector<int64_t> pooled_sizes(const at::Tensor& self, const kernels::Pool2dGeometry& g) {
  std::vector<int64_t> sizes = {static_cast<int64_t>(g.batch), static_cast<int64_t>(g.channels),
                                static_cast<int64_t>(g.out_h), static_cast<int64_t>(g.out_w)};
  if (self.dim() == 3) sizes.erase(sizes.begin());
  return sizes;
}

// Runs the problem from `source` into `target` (of its final sizes and layout): false, having written
// nothing, where the kernel declines it.
bool pooled(kernels::Pool2dProblem m, const at::Tensor& self, const at::Tensor& source, const at::Tensor& target) {
  if (target.numel() == 0) return true; // an empty batch binds nothing
  const at::Tensor written = written_form(target);
  m.dtype = self.scalar_type();
  m.channels_fast = self.suggest_memory_format() == at::MemoryFormat::ChannelsLast;
  m.image = image_operand(as4d(m.backward ? written : source));
  m.pooled = image_operand(as4d(m.backward ? source : written));
  runtime::DeviceContext& context = context_of(self);
  if (!kernels::pool2d_unsupported_reason(context, m).empty()) return false;
  {
    std::lock_guard<std::recursive_mutex> lock(context.mutex());
    kernels::pool2d(context, m);
  }
  if (!written.is_same(target)) target.copy_(written);
  return true;
}

kernels::Pool2dProblem average(const kernels::Pool2dGeometry& g, bool backward, bool count_include_pad,
                               std::optional<int64_t> divisor_override) {
  kernels::Pool2dProblem m;
  m.kind = kernels::PoolKind::Average;
  m.g = g;
  m.backward = backward;
  m.count_include_pad = count_include_pad;
  m.divisor_override = divisor_override.value_or(0);
  return m;
}

// The kernels return nothing where the kernel does not take the input (native.yaml's `functional`).
std::optional<at::Tensor> average_pool(const at::Tensor& self, at::IntArrayRef kernel_size, at::IntArrayRef stride,
                                       at::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                                       std::optional<int64_t> divisor_override) {
  if (!image_rank(self)) return std::nullopt;
  const auto g = avg_geometry(as4d(self), kernel_size, stride, padding, ceil_mode, divisor_override);
  if (!g) return std::nullopt;
  c10::DeviceGuard guard(self.device());
  const at::Tensor out = at::empty(pooled_sizes(self, *g), self.options().memory_format(self.suggest_memory_format()));
  if (!pooled(average(*g, false, count_include_pad, divisor_override), self, self, out)) return std::nullopt;
  return out;
}

std::optional<at::Tensor> average_pool_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                                at::IntArrayRef kernel_size, at::IntArrayRef stride,
                                                at::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                                                std::optional<int64_t> divisor_override) {
  if (!image_rank(self) || grad_output.scalar_type() != self.scalar_type()) return std::nullopt;
  const auto g = avg_geometry(as4d(self), kernel_size, stride, padding, ceil_mode, divisor_override);
  if (!g || grad_output.sizes() != at::IntArrayRef(pooled_sizes(self, *g))) return std::nullopt;
  c10::DeviceGuard guard(self.device());
  const at::Tensor grad_input = at::empty(self.sizes(), self.options().memory_format(self.suggest_memory_format()));
  if (!pooled(average(*g, true, count_include_pad, divisor_override), self, grad_output, grad_input))
    return std::nullopt;
  return grad_input;
}

// The adaptive pools take a non-empty image and (forward) a positive 2-d output size.
bool adaptive_fits(const at::Tensor& self, at::IntArrayRef output_size = {1, 1}) {
  return image_rank(self) && output_size.size() == 2 && self.size(-2) > 0 && self.size(-1) > 0 &&
      output_size[0] > 0 && output_size[1] > 0;
}

kernels::Pool2dProblem adaptive(const at::Tensor& self, int64_t out_h, int64_t out_w, bool backward) {
  const at::Tensor x = as4d(self);
  kernels::Pool2dProblem m;
  m.kind = kernels::PoolKind::AdaptiveAverage;
  m.g.batch = x.size(0), m.g.channels = x.size(1), m.g.in_h = x.size(2), m.g.in_w = x.size(3);
  m.g.out_h = out_h, m.g.out_w = out_w;
  m.backward = backward;
  return m;
}

std::optional<at::Tensor> adaptive_pool(const at::Tensor& self, at::IntArrayRef output_size) {
  c10::DeviceGuard guard(self.device());
  if (output_size[0] == 1 && output_size[1] == 1) return self.mean({-2, -1}, true);
  std::vector<int64_t> sizes(self.sizes().begin(), self.sizes().end());
  sizes[sizes.size() - 2] = output_size[0], sizes[sizes.size() - 1] = output_size[1];
  const at::Tensor out = at::empty(sizes, self.options().memory_format(self.suggest_memory_format()));
  if (!pooled(adaptive(self, output_size[0], output_size[1], false), self, self, out)) return std::nullopt;
  return out;
}

// Global pooling's gradient: each element's share, g / H / W as the CPU divides it.
std::optional<at::Tensor> adaptive_pool_backward(const at::Tensor& grad_output, const at::Tensor& self) {
  if (grad_output.scalar_type() != self.scalar_type() || grad_output.dim() != self.dim()) return std::nullopt;
  c10::DeviceGuard guard(self.device());
  const at::Tensor grad_input = at::empty(self.sizes(), self.options().memory_format(self.suggest_memory_format()));
  const int64_t out_h = grad_output.size(-2), out_w = grad_output.size(-1);
  if (out_h == 1 && out_w == 1) {
    grad_input.copy_(grad_output.div(self.size(-2)).div(self.size(-1)).expand(self.sizes()));
    return grad_input;
  }
  if (!pooled(adaptive(self, out_h, out_w, true), self, grad_output, grad_input)) return std::nullopt;
  return grad_input;
}

// Registered for dml from backend/ops/native.yaml (python -m backend.codegen).
#include "aten/generated/registrations/avg_pool_ops.inc"

} // namespace
} // namespace torch_dml::aten
