// max_pool2d (with indices) and its backward for float dtypes, composed from native ops like conv2d:
// the -inf-padded input's windows are one strided view, max over the window gives values and the
// kernel offset, from which PyTorch's flat input index (h * W + w) is computed. The backward adds the
// gradient back one kernel offset at a time where the saved index equals that offset's input element.
#include <ATen/ATen.h>
#include <ATen/native/Pool.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/constant_pad_nd.h>
#include <ATen/ops/max_pool2d_with_indices_backward_ops.h>
#include <ATen/ops/max_pool2d_with_indices_ops.h>
#include <ATen/ops/zeros.h>
#include <ATen/native/CPUFallback.h>
#include <torch/library.h>

#include <limits>

#include "aten/dtype_rule.h"
#include "aten/fallback.h"

namespace torch_dml::aten {
namespace {

struct Pool2d {
  int64_t kh, kw, sh, sw, ph, pw, dh, dw, h, w, oh, ow;
  int64_t padded_h() const { return std::max(h + 2 * ph, (oh - 1) * sh + (kh - 1) * dh + 1); }
  int64_t padded_w() const { return std::max(w + 2 * pw, (ow - 1) * sw + (kw - 1) * dw + 1); }
};

bool native_pool(const at::Tensor& self, at::IntArrayRef kernel, at::IntArrayRef stride, at::IntArrayRef padding,
                 at::IntArrayRef dilation) {
  auto ok = [](at::IntArrayRef v, bool empty_ok) { return (v.empty() && empty_ok) || v.size() == 1 || v.size() == 2; };
  return (self.dim() == 3 || self.dim() == 4) && self.numel() > 0 && ok(kernel, false) &&
      ok(stride, true) && ok(padding, false) && ok(dilation, false);
}

Pool2d pool_shape(const at::Tensor& x, at::IntArrayRef kernel, at::IntArrayRef stride, at::IntArrayRef padding,
                  at::IntArrayRef dilation, bool ceil_mode) {
  auto second = [](at::IntArrayRef v) { return v.size() == 2 ? v[1] : v[0]; };
  Pool2d p{};
  p.kh = kernel[0], p.kw = second(kernel);
  p.sh = stride.empty() ? p.kh : stride[0], p.sw = stride.empty() ? p.kw : second(stride);
  p.ph = padding[0], p.pw = second(padding), p.dh = dilation[0], p.dw = second(dilation);
  TORCH_CHECK(p.kh > 0 && p.kw > 0 && p.sh > 0 && p.sw > 0 && p.dh > 0 && p.dw > 0,
              "max_pool2d: kernel_size, stride and dilation must be greater than zero");
  TORCH_CHECK(p.ph >= 0 && p.pw >= 0 && p.ph <= p.kh / 2 && p.pw <= p.kw / 2,
              "pad should be at most half of effective kernel size, but got pad=", p.ph, ", kernel_size=", p.kh);
  p.h = x.size(2), p.w = x.size(3);
  p.oh = at::native::pooling_output_shape<int64_t>(p.h, p.kh, p.ph, p.sh, p.dh, ceil_mode);
  p.ow = at::native::pooling_output_shape<int64_t>(p.w, p.kw, p.pw, p.sw, p.dw, ceil_mode);
  TORCH_CHECK(p.oh > 0 && p.ow > 0, "max_pool2d: output size is too small for input (", p.h, ", ", p.w, ")");
  return p;
}

// (n, c, kh, kw, oh, ow): each output position's window in a tensor of the padded size.
at::Tensor windows(const at::Tensor& padded, const Pool2d& p) {
  const auto s = padded.strides();
  return padded.as_strided({padded.size(0), padded.size(1), p.kh, p.kw, p.oh, p.ow},
                           {s[0], s[1], p.dh * s[2], p.dw * s[3], p.sh * s[2], p.sw * s[3]}, padded.storage_offset());
}

// Flat input index (h * W + w) of kernel offset (0, 0) for every output position, on the device.
at::Tensor base_index(const Pool2d& p, const at::Device& device) {
  const auto cpu = at::TensorOptions().dtype(c10::kLong);
  const at::Tensor rows = (at::arange(p.oh, cpu) * p.sh - p.ph).mul_(p.w).view({p.oh, 1});
  const at::Tensor cols = (at::arange(p.ow, cpu) * p.sw - p.pw).view({1, p.ow});
  return (rows + cols).to(device);
}

at::Tensor as4d(const at::Tensor& t) {
  return t.dim() == 3 ? t.unsqueeze(0) : t;
}

std::tuple<at::Tensor&, at::Tensor&> max_pool2d_out(const at::Tensor& self, at::IntArrayRef kernel,
                                                    at::IntArrayRef stride, at::IntArrayRef padding,
                                                    at::IntArrayRef dilation, bool ceil_mode, at::Tensor& out,
                                                    at::Tensor& indices) {
  const at::Tensor x = as4d(self);
  const Pool2d p = pool_shape(x, kernel, stride, padding, dilation, ceil_mode);
  const at::Tensor padded = at::constant_pad_nd(
      x, {p.pw, p.padded_w() - p.w - p.pw, p.ph, p.padded_h() - p.h - p.ph}, -std::numeric_limits<double>::infinity());
  const at::Tensor win = windows(padded, p).reshape({x.size(0), x.size(1), p.kh * p.kw, p.oh, p.ow});
  auto [values, offset] = win.max(2);
  const at::Tensor row = offset.div(p.kw, "floor");
  const at::Tensor index = base_index(p, x.device()) + row * (p.dh * p.w) + (offset - row * p.kw) * p.dw;
  std::vector<int64_t> sizes = {x.size(0), x.size(1), p.oh, p.ow};
  if (self.dim() == 3) sizes.erase(sizes.begin());
  at::native::resize_output(out, sizes);
  at::native::resize_output(indices, sizes);
  out.copy_(values.view(sizes));
  indices.copy_(index.view(sizes));
  return {out, indices};
}

at::Tensor& max_pool2d_backward_out(const at::Tensor& grad_output, const at::Tensor& self, at::IntArrayRef kernel,
                                    at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation,
                                    bool ceil_mode, const at::Tensor& indices, at::Tensor& grad_input) {
  const at::Tensor x = as4d(self), grad = as4d(grad_output), saved = as4d(indices);
  const Pool2d p = pool_shape(x, kernel, stride, padding, dilation, ceil_mode);
  at::Tensor padded = at::zeros({x.size(0), x.size(1), p.padded_h(), p.padded_w()}, grad.options());
  const at::Tensor win = windows(padded, p);
  const at::Tensor base = base_index(p, x.device());
  for (int64_t i = 0; i < p.kh; ++i) {
    for (int64_t j = 0; j < p.kw; ++j) {
      const at::Tensor hit = saved.eq(base + (i * p.dh * p.w + j * p.dw));
      win.select(2, i).select(2, j).add_(grad.mul(hit));
    }
  }
  const at::Tensor result = padded.narrow(2, p.ph, p.h).narrow(3, p.pw, p.w);
  at::native::resize_output(grad_input, self.sizes());
  grad_input.copy_(self.dim() == 3 ? result.squeeze(0) : result);
  return grad_input;
}

// Registered for dml from backend/ops/native.yaml (python -m backend.codegen).
#include "aten/generated/registrations/pooling_ops.inc"

} // namespace
} // namespace torch_dml::aten
