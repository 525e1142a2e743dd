// 3-D pooling (video and volumetric models: C3D's and I3D's max pools, the adaptive average pool that
// ends torchvision's video ResNets; adaptive max pooling too) as two passes of the 2-D pooling kernels: one over height and
// width with depth folded into the channels, one over depth with height and width as one row. Both
// pools are separable. An average's window is a box whose divisor is a product of per-axis counts
// (count_include_pad, ceil_mode clipping) or a constant (divisor_override, divided once, in the second
// pass), so averaging each axis in turn gives the 3-D average; adaptive windows too. A maximum's first
// pass keeps, per depth, the first maximum in (h, w) order (the last NaN), the second the first depth
// holding the greatest of those (the last NaN): the CPU's choice scanning (d, h, w), ties and -inf
// windows included; the flat index d * H * W + h * W + w is rebuilt from the two passes' indices.
// 16-bit averages are summed in float32 across both passes and rounded once. Global adaptive pooling
// is the mean reduction. The max pool's backward adds each gradient at its saved index (an index
// outside the input raises at the next wait for the device).
#include <ATen/ATen.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/native/Pool.h>
#include <ATen/ops/_adaptive_avg_pool3d_backward_ops.h>
#include <ATen/ops/_adaptive_avg_pool3d_ops.h>
#include <ATen/ops/adaptive_avg_pool3d_backward_ops.h>
#include <ATen/ops/adaptive_avg_pool3d_ops.h>
#include <ATen/ops/adaptive_max_pool3d_backward_ops.h>
#include <ATen/ops/adaptive_max_pool3d_ops.h>
#include <ATen/ops/avg_pool3d_backward_ops.h>
#include <ATen/ops/avg_pool3d_ops.h>
#include <ATen/ops/max_pool3d_with_indices_backward_ops.h>
#include <ATen/ops/max_pool3d_with_indices_ops.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <array>
#include <string>
#include <tuple>
#include <vector>

#include "aten/common.h"
#include "aten/dtype_rule.h"
#include "aten/fallback.h"
#include "aten/index_range.h"
#include "aten/widen.h"

namespace torch_dml::aten {
namespace {

// (N, C, D, H, W), batched or not, and the per-axis arguments PyTorch's int[3] lists spell short.
struct Volume {
  int64_t n, c, d, h, w;
};

Volume volume_of(const at::Tensor& self) {
  TORCH_CHECK(self.dim() == 4 || self.dim() == 5, "expected a 4-D or 5-D input for 3-D pooling, got ", self.sizes());
  const at::Tensor x = self.dim() == 4 ? self.unsqueeze(0) : self;
  return {x.size(0), x.size(1), x.size(2), x.size(3), x.size(4)};
}

std::array<int64_t, 3> triple(at::IntArrayRef v, std::array<int64_t, 3> fallback) {
  if (v.empty()) return fallback;
  if (v.size() == 1) return {v[0], v[0], v[0]};
  TORCH_CHECK(v.size() == 3, "3-D pooling takes a single int or a tuple of three ints, got ", v);
  return {v[0], v[1], v[2]};
}

std::vector<int64_t> shaped(const at::Tensor& self, const Volume& v, int64_t d, int64_t h, int64_t w) {
  if (self.dim() == 4) return {v.c, d, h, w};
  return {v.n, v.c, d, h, w};
}

// Whether the arguments are ones the CPU accepts (it raises for the others, through the fallback):
// positive kernel, stride and dilation, padding at most half the kernel, every output extent positive.
bool fits(const at::Tensor& self, at::IntArrayRef kernel_size, at::IntArrayRef stride, at::IntArrayRef padding,
          at::IntArrayRef dilation, bool ceil_mode) {
  if ((self.dim() != 4 && self.dim() != 5) || self.numel() == 0 || kernel_size.empty() || kernel_size.size() == 2 ||
      kernel_size.size() > 3 || stride.size() == 2 || stride.size() > 3 || padding.size() == 2 || padding.size() > 3 ||
      dilation.size() == 2 || dilation.size() > 3)
    return false;
  const auto k = triple(kernel_size, {0, 0, 0});
  const auto s = triple(stride, k), p = triple(padding, {0, 0, 0}), d = triple(dilation, {1, 1, 1});
  for (int a = 0; a < 3; ++a) {
    if (k[a] <= 0 || s[a] <= 0 || d[a] <= 0 || p[a] < 0 || p[a] > k[a] / 2) return false;
    const int64_t in = self.size(self.dim() - 3 + a);
    if (at::native::pooling_output_shape<int64_t>(in, k[a], p[a], s[a], d[a], ceil_mode) <= 0) return false;
  }
  return true;
}

bool avg_fits(const at::Tensor& self, at::IntArrayRef kernel_size, at::IntArrayRef stride, at::IntArrayRef padding,
              bool ceil_mode, std::optional<int64_t> divisor_override) {
  return fits(self, kernel_size, stride, padding, {1}, ceil_mode) && divisor_override.value_or(1) != 0;
}

bool adaptive_fits(const at::Tensor& self, at::IntArrayRef output_size) {
  return (self.dim() == 4 || self.dim() == 5) && self.numel() > 0 && output_size.size() == 3 &&
      output_size[0] > 0 && output_size[1] > 0 && output_size[2] > 0;
}

// ---- average pooling ---------------------------------------------------------------------------

struct Avg {
  std::array<int64_t, 3> kernel, stride, padding;
  bool ceil_mode, count_include_pad;
  std::optional<int64_t> divisor_override;
};

at::Tensor avg_pool(const at::Tensor& self, at::IntArrayRef kernel_size, at::IntArrayRef stride,
                    at::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                    std::optional<int64_t> divisor_override) {
  const Volume v = volume_of(self);
  const auto k = triple(kernel_size, {0, 0, 0});
  const auto s = triple(stride, k), p = triple(padding, {0, 0, 0});
  c10::DeviceGuard guard(self.device());
  const at::Tensor x = widened(self).reshape({v.n, v.c * v.d, v.h, v.w});
  const std::optional<int64_t> sum_only = divisor_override ? std::optional<int64_t>(1) : std::nullopt;
  const at::Tensor planes = at::avg_pool2d(x, {k[1], k[2]}, {s[1], s[2]}, {p[1], p[2]}, ceil_mode, count_include_pad,
                                           sum_only);
  const int64_t oh = planes.size(2), ow = planes.size(3);
  const at::Tensor depth = at::avg_pool2d(planes.reshape({v.n * v.c, 1, v.d, oh * ow}), {k[0], 1}, {s[0], 1},
                                          {p[0], 0}, ceil_mode, count_include_pad, divisor_override);
  return depth.reshape(shaped(self, v, depth.size(2), oh, ow)).to(self.scalar_type());
}

at::Tensor avg_pool_backward(const at::Tensor& grad_output, const at::Tensor& self, at::IntArrayRef kernel_size,
                             at::IntArrayRef stride, at::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                             std::optional<int64_t> divisor_override) {
  const Volume v = volume_of(self);
  const auto k = triple(kernel_size, {0, 0, 0});
  const auto s = triple(stride, k), p = triple(padding, {0, 0, 0});
  c10::DeviceGuard guard(self.device());
  const at::Tensor grad = widened(grad_output);
  const int64_t od = grad.size(-3), oh = grad.size(-2), ow = grad.size(-1);
  const auto options = grad.options();
  const at::Tensor planes_grad =
      at::avg_pool2d_backward(grad.reshape({v.n * v.c, 1, od, oh * ow}), at::empty({v.n * v.c, 1, v.d, oh * ow}, options),
                              {k[0], 1}, {s[0], 1}, {p[0], 0}, ceil_mode, count_include_pad, divisor_override);
  const std::optional<int64_t> sum_only = divisor_override ? std::optional<int64_t>(1) : std::nullopt;
  const at::Tensor grad_input = at::avg_pool2d_backward(
      planes_grad.reshape({v.n, v.c * v.d, oh, ow}), at::empty({v.n, v.c * v.d, v.h, v.w}, options), {k[1], k[2]},
      {s[1], s[2]}, {p[1], p[2]}, ceil_mode, count_include_pad, sum_only);
  return grad_input.reshape(self.sizes()).to(self.scalar_type());
}

// ---- adaptive average pooling ------------------------------------------------------------------

at::Tensor adaptive_pool(const at::Tensor& self, at::IntArrayRef output_size) {
  TORCH_CHECK(output_size.size() == 3, "adaptive_avg_pool3d: output_size must be 3, got ", output_size);
  const Volume v = volume_of(self);
  c10::DeviceGuard guard(self.device());
  if (output_size[0] == 1 && output_size[1] == 1 && output_size[2] == 1) return self.mean({-3, -2, -1}, true);
  const at::Tensor planes =
      at::_adaptive_avg_pool2d(widened(self).reshape({v.n, v.c * v.d, v.h, v.w}), {output_size[1], output_size[2]});
  const int64_t plane = output_size[1] * output_size[2];
  const at::Tensor depth =
      at::_adaptive_avg_pool2d(planes.reshape({v.n * v.c, 1, v.d, plane}), {output_size[0], plane});
  return depth.reshape(shaped(self, v, output_size[0], output_size[1], output_size[2])).to(self.scalar_type());
}

at::Tensor adaptive_pool_backward(const at::Tensor& grad_output, const at::Tensor& self) {
  const Volume v = volume_of(self);
  c10::DeviceGuard guard(self.device());
  const int64_t od = grad_output.size(-3), oh = grad_output.size(-2), ow = grad_output.size(-1);
  if (od == 1 && oh == 1 && ow == 1)
    return grad_output.div(v.d).div(v.h).div(v.w).expand(self.sizes()).contiguous();
  const at::Tensor grad = widened(grad_output);
  const auto options = grad.options();
  const at::Tensor planes_grad = at::_adaptive_avg_pool2d_backward(
      grad.reshape({v.n * v.c, 1, od, oh * ow}), at::empty({v.n * v.c, 1, v.d, oh * ow}, options));
  const at::Tensor grad_input = at::_adaptive_avg_pool2d_backward(planes_grad.reshape({v.n, v.c * v.d, oh, ow}),
                                                                  at::empty({v.n, v.c * v.d, v.h, v.w}, options));
  return grad_input.reshape(self.sizes()).to(self.scalar_type());
}

// ---- max pooling -------------------------------------------------------------------------------

// The two passes joined: the values, and the flat index d * H * W + h * W + w rebuilt from the second
// pass's (depth * plane + position) and the first's (per depth, h * W + w).
std::tuple<at::Tensor, at::Tensor> joined(const at::Tensor& self, const Volume& v, const at::Tensor& plane_index,
                                          const at::Tensor& values, const at::Tensor& depth_index, int64_t oh,
                                          int64_t ow) {
  const int64_t plane = oh * ow, od = values.size(2);
  const at::Tensor depth = at::div(depth_index.reshape({v.n * v.c, od, plane}), plane, "floor");
  const at::Tensor within = plane_index.reshape({v.n * v.c, v.d, plane}).gather(1, depth);
  const at::Tensor index = depth.mul(v.h * v.w).add_(within);
  const auto sizes = shaped(self, v, od, oh, ow);
  return {values.reshape(sizes), index.reshape(sizes)};
}

std::tuple<at::Tensor, at::Tensor> max_pool(const at::Tensor& self, at::IntArrayRef kernel_size,
                                            at::IntArrayRef stride, at::IntArrayRef padding,
                                            at::IntArrayRef dilation, bool ceil_mode) {
  const Volume v = volume_of(self);
  const auto k = triple(kernel_size, {0, 0, 0});
  const auto s = triple(stride, k), p = triple(padding, {0, 0, 0}), dl = triple(dilation, {1, 1, 1});
  c10::DeviceGuard guard(self.device());
  const auto [planes, plane_index] = at::max_pool2d_with_indices(self.reshape({v.n, v.c * v.d, v.h, v.w}),
                                                                 {k[1], k[2]}, {s[1], s[2]}, {p[1], p[2]},
                                                                 {dl[1], dl[2]}, ceil_mode);
  const int64_t oh = planes.size(2), ow = planes.size(3);
  const auto [values, depth_index] = at::max_pool2d_with_indices(planes.reshape({v.n * v.c, 1, v.d, oh * ow}),
                                                                 {k[0], 1}, {s[0], 1}, {p[0], 0}, {dl[0], 1}, ceil_mode);
  return joined(self, v, plane_index, values, depth_index, oh, ow);
}

// Adaptive windows are boxes too: the same two passes on adaptive_max_pool2d (whose second pass maps
// each plane position to itself).
std::tuple<at::Tensor, at::Tensor> adaptive_max(const at::Tensor& self, at::IntArrayRef output_size) {
  const Volume v = volume_of(self);
  c10::DeviceGuard guard(self.device());
  const int64_t oh = output_size[1], ow = output_size[2];
  const auto [planes, plane_index] =
      at::adaptive_max_pool2d(self.reshape({v.n, v.c * v.d, v.h, v.w}), {oh, ow});
  const auto [values, depth_index] =
      at::adaptive_max_pool2d(planes.reshape({v.n * v.c, 1, v.d, oh * ow}), {output_size[0], oh * ow});
  return joined(self, v, plane_index, values, depth_index, oh, ow);
}

// Each output's gradient added at its saved flat index, in output order; 16-bit sums in float32.
at::Tensor scattered_back(const std::string& op, const at::Tensor& grad_output, const at::Tensor& self,
                          const at::Tensor& indices) {
  const Volume v = volume_of(self);
  TORCH_CHECK(indices.scalar_type() == c10::kLong && indices.sizes() == grad_output.sizes(), op,
              ": expected int64 indices of grad_output's shape ", grad_output.sizes(), ", got ",
              indices.scalar_type(), " ", indices.sizes());
  c10::DeviceGuard guard(self.device());
  const int64_t volume = v.d * v.h * v.w;
  const at::Tensor index = indices.reshape({v.n * v.c, -1});
  check_index_range(index, 0, volume, op,
                    "index {} is out of bounds for the pooled input's " + std::to_string(volume) + " elements");
  const c10::ScalarType sum_type = self.scalar_type() == c10::kDouble ? c10::kDouble : c10::kFloat;
  at::Tensor sums = at::zeros({v.n * v.c, volume}, self.options().dtype(sum_type));
  {
    PositionsChecked checked;
    sums.scatter_add_(1, index, widened(grad_output).reshape({v.n * v.c, -1}));
  }
  return sums.reshape(self.sizes()).to(self.scalar_type());
}

at::Tensor max_pool_backward(const at::Tensor& grad_output, const at::Tensor& self, at::IntArrayRef /*kernel_size*/,
                             at::IntArrayRef /*stride*/, at::IntArrayRef /*padding*/, at::IntArrayRef /*dilation*/,
                             bool /*ceil_mode*/, const at::Tensor& indices) {
  return scattered_back("max_pool3d_with_indices_backward", grad_output, self, indices);
}

at::Tensor adaptive_max_backward(const at::Tensor& grad_output, const at::Tensor& self, const at::Tensor& indices) {
  return scattered_back("adaptive_max_pool3d_backward", grad_output, self, indices);
}

// Registered for dml from backend/ops/native.yaml (python -m backend.codegen).
#include "aten/generated/registrations/pool3d_ops.inc"

} // namespace
} // namespace torch_dml::aten
