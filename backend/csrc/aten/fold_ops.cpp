// nn.Unfold / nn.Fold (im2col, col2im; each the other's gradient) composed from dml ops: im2col is one
// strided view of the zero-padded image, every patch at once, copied out; col2im adds each kernel
// tap's columns back into the padded image through the same view, one tap at a time (within a tap,
// columns land on distinct pixels, so each add is race-free; taps add in the CPU's order). Arguments
// the CPU refuses go to it (`takes`), which raises its own errors.
#include <ATen/ATen.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/ops/col2im_ops.h>
#include <ATen/ops/im2col_ops.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <array>

#include "aten/common.h"
#include "aten/dtype_rule.h"
#include "aten/fallback.h"

namespace torch_dml::aten {
namespace {

struct Window {
  std::array<int64_t, 2> kernel, dilation, padding, stride;
};

Window window_of(at::IntArrayRef kernel, at::IntArrayRef dilation, at::IntArrayRef padding, at::IntArrayRef stride) {
  return {{kernel[0], kernel[1]}, {dilation[0], dilation[1]}, {padding[0], padding[1]}, {stride[0], stride[1]}};
}

int64_t blocks(int64_t size, const Window& w, int a) {
  return (size + 2 * w.padding[a] - (w.dilation[a] * (w.kernel[a] - 1) + 1)) / w.stride[a] + 1;
}

bool window_fits(at::IntArrayRef kernel, at::IntArrayRef dilation, at::IntArrayRef padding, at::IntArrayRef stride) {
  if (kernel.size() != 2 || dilation.size() != 2 || padding.size() != 2 || stride.size() != 2) return false;
  for (int a = 0; a < 2; ++a)
    if (kernel[a] <= 0 || dilation[a] <= 0 || padding[a] < 0 || stride[a] <= 0) return false;
  return true;
}

// (n, c, kh, kw, oh, ow): every block of the padded image, a view.
at::Tensor patches(const at::Tensor& padded, const Window& w, int64_t oh, int64_t ow) {
  const auto s = padded.strides();
  return padded.as_strided({padded.size(0), padded.size(1), w.kernel[0], w.kernel[1], oh, ow},
                           {s[0], s[1], w.dilation[0] * s[2], w.dilation[1] * s[3], w.stride[0] * s[2],
                            w.stride[1] * s[3]},
                           padded.storage_offset());
}

bool unfold_fits(const at::Tensor& self, at::IntArrayRef kernel, at::IntArrayRef dilation, at::IntArrayRef padding,
                 at::IntArrayRef stride) {
  if ((self.dim() != 3 && self.dim() != 4) || !window_fits(kernel, dilation, padding, stride)) return false;
  const Window w = window_of(kernel, dilation, padding, stride);
  return self.size(-3) > 0 && blocks(self.size(-2), w, 0) > 0 && blocks(self.size(-1), w, 1) > 0;
}

at::Tensor unfolded(const at::Tensor& self, at::IntArrayRef kernel, at::IntArrayRef dilation, at::IntArrayRef padding,
                    at::IntArrayRef stride) {
  c10::DeviceGuard guard(self.device());
  const Window w = window_of(kernel, dilation, padding, stride);
  const at::Tensor x = self.dim() == 3 ? self.unsqueeze(0) : self;
  const int64_t oh = blocks(x.size(2), w, 0), ow = blocks(x.size(3), w, 1);
  const at::Tensor padded =
      at::constant_pad_nd(x, {w.padding[1], w.padding[1], w.padding[0], w.padding[0]}, 0);
  const at::Tensor cols = patches(padded, w, oh, ow).reshape({x.size(0), x.size(1) * w.kernel[0] * w.kernel[1], oh * ow});
  return self.dim() == 3 ? cols.squeeze(0) : cols;
}

bool fold_fits(const at::Tensor& self, at::IntArrayRef output_size, at::IntArrayRef kernel, at::IntArrayRef dilation,
               at::IntArrayRef padding, at::IntArrayRef stride) {
  if ((self.dim() != 2 && self.dim() != 3) || output_size.size() != 2 || !window_fits(kernel, dilation, padding, stride))
    return false;
  const Window w = window_of(kernel, dilation, padding, stride);
  const int64_t taps = w.kernel[0] * w.kernel[1];
  const int64_t oh = blocks(output_size[0], w, 0), ow = blocks(output_size[1], w, 1);
  return output_size[0] > 0 && output_size[1] > 0 && oh > 0 && ow > 0 && self.size(-2) % taps == 0 &&
      self.size(-2) > 0 && self.size(-1) == oh * ow;
}

at::Tensor folded(const at::Tensor& self, at::IntArrayRef output_size, at::IntArrayRef kernel,
                  at::IntArrayRef dilation, at::IntArrayRef padding, at::IntArrayRef stride) {
  c10::DeviceGuard guard(self.device());
  const Window w = window_of(kernel, dilation, padding, stride);
  const at::Tensor cols3 = self.dim() == 2 ? self.unsqueeze(0) : self;
  const int64_t n = cols3.size(0), c = cols3.size(1) / (w.kernel[0] * w.kernel[1]);
  const int64_t oh = blocks(output_size[0], w, 0), ow = blocks(output_size[1], w, 1);
  const at::Tensor cols = cols3.reshape({n, c, w.kernel[0], w.kernel[1], oh, ow});
  at::Tensor padded = at::zeros({n, c, output_size[0] + 2 * w.padding[0], output_size[1] + 2 * w.padding[1]},
                                self.options());
  const at::Tensor view = patches(padded, w, oh, ow);
  for (int64_t i = 0; i < w.kernel[0]; ++i)
    for (int64_t j = 0; j < w.kernel[1]; ++j) view.select(2, i).select(2, j).add_(cols.select(2, i).select(2, j));
  const at::Tensor image =
      padded.narrow(2, w.padding[0], output_size[0]).narrow(3, w.padding[1], output_size[1]).contiguous();
  return self.dim() == 2 ? image.squeeze(0) : image;
}

// Registered for dml from backend/ops/native.yaml (python -m backend.codegen).
#include "aten/generated/registrations/fold_ops.inc"

} // namespace
} // namespace torch_dml::aten
