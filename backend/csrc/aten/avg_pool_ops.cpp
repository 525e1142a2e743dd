// avg_pool2d and adaptive_avg_pool2d, forward and backward, as two matmuls: average pooling is linear
// and separable, out = A_h · x · A_wᵀ, where A_h (out_h × in_h) holds each output row's weights over
// input rows (window membership divided by that axis's share of the divisor; zero padding contributes
// nothing, so padded positions simply have no column). Every divisor rule of PyTorch is a product of
// per-axis counts (count_include_pad on or off, ceil_mode windows clipped at the padded edge) or a
// constant (divisor_override), so the factorisation is exact. The backward is Aₕᵀ · g · A_w.
//
// Native and exact in its weights, but it does O(in·out) work per axis: fine for the usual small
// outputs (adaptive pooling to 7×7 or 1×1, 2×2 pools of small maps), wasteful for large maps, where a
// direct windowed kernel will replace it.
#include <ATen/ATen.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/native/Pool.h>
#include <ATen/ops/_adaptive_avg_pool2d_backward_ops.h>
#include <ATen/ops/_adaptive_avg_pool2d_ops.h>
#include <ATen/ops/avg_pool2d_backward_ops.h>
#include <ATen/ops/avg_pool2d_ops.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "aten/common.h"
#include "aten/dtype_rule.h"
#include "aten/fallback.h"

namespace torch_dml::aten {
namespace {

// An image or a batch of them (the dtypes are native.yaml's rule).
bool image_rank(const at::Tensor& t) {
  return t.dim() == 3 || t.dim() == 4;
}

// One axis of avg_pool2d: weights[o, i] = 1 / count(o) for input i in output o's window, where count
// is the window's length clipped to the padded input (count_include_pad) or to the input, or 1 with a
// divisor override (applied once, as a scale, by the caller).
at::Tensor pool_weights(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t pad, bool count_include_pad,
                        bool override) {
  at::Tensor w = at::zeros({out, in}, at::kDouble);
  auto a = w.accessor<double, 2>();
  for (int64_t o = 0; o < out; ++o) {
    const int64_t start = o * stride - pad;
    const int64_t end = std::min(start + kernel, in + pad);
    const int64_t padded_count = end - start;
    const int64_t first = std::max<int64_t>(start, 0), last = std::min(end, in);
    const int64_t count = override ? 1 : count_include_pad ? padded_count : last - first;
    for (int64_t i = first; i < last; ++i) a[o][i] = 1.0 / static_cast<double>(count);
  }
  return w;
}

// One axis of adaptive average pooling: output o averages inputs [floor(o·in/out), ceil((o+1)·in/out)).
at::Tensor adaptive_weights(int64_t in, int64_t out) {
  at::Tensor w = at::zeros({out, in}, at::kDouble);
  auto a = w.accessor<double, 2>();
  for (int64_t o = 0; o < out; ++o) {
    const int64_t start = o * in / out, end = ((o + 1) * in + out - 1) / out;
    for (int64_t i = start; i < end; ++i) a[o][i] = 1.0 / static_cast<double>(end - start);
  }
  return w;
}

// A_h · x · A_wᵀ over the last two dims of x (weights made on the host, moved to x's device).
// float16/bfloat16 compute in float32 and round once, as the CPU's pooling does: half-precision
// weights (1/9 is not exact) and a rounded intermediate would each cost an ulp.
at::Tensor separable(const at::Tensor& x, const at::Tensor& rows, const at::Tensor& cols, double scale) {
  const bool reduced = x.scalar_type() == c10::kHalf || x.scalar_type() == c10::kBFloat16;
  const at::Tensor input = reduced ? x.to(c10::kFloat) : x;
  const at::Tensor h = rows.to(input.options()), w = cols.to(input.options());
  at::Tensor out = at::matmul(at::matmul(h, input), w.t());
  if (scale != 1.0) out = out * scale;
  return reduced ? out.to(x.scalar_type()) : out;
}

struct AvgPool {
  at::Tensor rows, cols;
  double scale = 1.0;
};

std::optional<AvgPool> avg_pool_plan(const at::Tensor& self, at::IntArrayRef kernel_size, at::IntArrayRef stride,
                                     at::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                                     std::optional<int64_t> divisor_override) {
  if (!image_rank(self) || kernel_size.empty() || kernel_size.size() > 2 || stride.size() > 2 || padding.empty() ||
      padding.size() > 2 || (divisor_override && *divisor_override == 0))
    return std::nullopt;
  const int64_t kh = kernel_size[0], kw = kernel_size.size() == 1 ? kh : kernel_size[1];
  const int64_t sh = stride.empty() ? kh : stride[0], sw = stride.empty() ? kw : stride.size() == 1 ? sh : stride[1];
  const int64_t ph = padding[0], pw = padding.size() == 1 ? ph : padding[1];
  if (kh <= 0 || kw <= 0 || sh <= 0 || sw <= 0 || ph < 0 || pw < 0 || ph * 2 > kh || pw * 2 > kw) return std::nullopt;
  const int64_t in_h = self.size(-2), in_w = self.size(-1);
  const int64_t out_h = at::native::pooling_output_shape<int64_t>(in_h, kh, ph, sh, 1, ceil_mode);
  const int64_t out_w = at::native::pooling_output_shape<int64_t>(in_w, kw, pw, sw, 1, ceil_mode);
  if (out_h <= 0 || out_w <= 0) return std::nullopt;
  const bool override = divisor_override.has_value();
  return AvgPool{pool_weights(in_h, out_h, kh, sh, ph, count_include_pad, override),
                 pool_weights(in_w, out_w, kw, sw, pw, count_include_pad, override),
                 override ? 1.0 / static_cast<double>(*divisor_override) : 1.0};
}

// The kernels return nothing where the plan does not take the input (native.yaml's `functional`).
std::optional<at::Tensor> average_pool(const at::Tensor& self, at::IntArrayRef kernel_size, at::IntArrayRef stride,
                                       at::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                                       std::optional<int64_t> divisor_override) {
  const auto plan = avg_pool_plan(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override);
  if (!plan) return std::nullopt;
  c10::DeviceGuard guard(self.device());
  return separable(self, plan->rows, plan->cols, plan->scale).contiguous();
}

std::optional<at::Tensor> average_pool_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                                at::IntArrayRef kernel_size, at::IntArrayRef stride,
                                                at::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                                                std::optional<int64_t> divisor_override) {
  const auto plan = avg_pool_plan(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override);
  if (!plan || grad_output.size(-2) != plan->rows.size(0) || grad_output.size(-1) != plan->cols.size(0))
    return std::nullopt;
  c10::DeviceGuard guard(self.device());
  return separable(grad_output, plan->rows.t(), plan->cols.t(), plan->scale).contiguous();
}

// The adaptive pools take a non-empty image and (forward) a positive 2-d output size.
bool adaptive_fits(const at::Tensor& self, at::IntArrayRef output_size = {1, 1}) {
  return image_rank(self) && output_size.size() == 2 && self.size(-2) > 0 && self.size(-1) > 0 &&
      output_size[0] > 0 && output_size[1] > 0;
}

at::Tensor adaptive_pool(const at::Tensor& self, at::IntArrayRef output_size) {
  c10::DeviceGuard guard(self.device());
  return separable(self, adaptive_weights(self.size(-2), output_size[0]),
                   adaptive_weights(self.size(-1), output_size[1]), 1.0)
      .contiguous();
}

at::Tensor adaptive_pool_backward(const at::Tensor& grad_output, const at::Tensor& self) {
  c10::DeviceGuard guard(self.device());
  const at::Tensor rows = adaptive_weights(self.size(-2), grad_output.size(-2));
  const at::Tensor cols = adaptive_weights(self.size(-1), grad_output.size(-1));
  return separable(grad_output, rows.t(), cols.t(), 1.0).contiguous();
}

// Registered for dml from backend/ops/native.yaml (python -m backend.codegen).
#include "aten/generated/registrations/avg_pool_ops.inc"

} // namespace
} // namespace torch_dml::aten
