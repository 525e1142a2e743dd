// Convolutions. A backend outside ATen receives conv1d/2d/3d (and transposed ones) as
// convolution_overrideable, whose default raises rather than reaching the boxed CPU fallback, and whose
// CPU counterpart is not registered under that name.
//
// Forward conv2d in float32/float16/bfloat16 is native, composed from native ops: the input's patches
// are gathered by one strided view + copy (im2col), and a batched matmul with the weight does the rest.
// Transposed convolutions, other ranks and dtypes, and every backward route to at::convolution on the
// CPU by hand, with the fallback's bookkeeping (counted, warned, refused in strict mode).
#include <ATen/ops/constant_pad_nd.h>
#include <ATen/ops/convolution.h>
#include <ATen/ops/convolution_backward.h>
#include <ATen/ops/matmul.h>
#include <torch/library.h>

#include <sstream>

#include "aten/common.h"
#include "aten/fallback.h"

namespace torch_dml::aten {
namespace {

std::string describe(const at::Tensor& input) {
  std::ostringstream text;
  text << "(" << input.scalar_type() << " on " << context_of(input).describe() << ")";
  return text.str();
}

at::Tensor host(const at::Tensor& t) {
  return t.defined() ? t.cpu() : t;
}

bool native_conv2d(const at::Tensor& input, const at::Tensor& weight, bool transposed, at::IntArrayRef stride,
                   at::IntArrayRef padding, at::IntArrayRef dilation) {
  const auto type = input.scalar_type();
  const bool floating = type == c10::kFloat || type == c10::kHalf || type == c10::kBFloat16;
  return floating && !transposed && input.dim() == 4 && weight.dim() == 4 && weight.scalar_type() == type &&
      stride.size() == 2 && padding.size() == 2 && dilation.size() == 2;
}

at::Tensor conv2d_im2col(const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                         at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation, int64_t groups) {
  const int64_t n = input.size(0), c = input.size(1), o = weight.size(0), kh = weight.size(2), kw = weight.size(3);
  TORCH_CHECK(groups > 0 && c % groups == 0 && o % groups == 0 && weight.size(1) * groups == c,
              "conv2d: expected weight of shape (", o, ", ", c / std::max<int64_t>(groups, 1), ", kh, kw) for ", c,
              " input channels and groups=", groups, ", got ", weight.sizes());
  const at::Tensor padded = (padding[0] || padding[1])
      ? at::constant_pad_nd(input, {padding[1], padding[1], padding[0], padding[0]}, 0)
      : input;
  const int64_t h = padded.size(2), w = padded.size(3);
  const int64_t oh = (h - dilation[0] * (kh - 1) - 1) / stride[0] + 1;
  const int64_t ow = (w - dilation[1] * (kw - 1) - 1) / stride[1] + 1;
  TORCH_CHECK(oh > 0 && ow > 0, "conv2d: kernel (", kh, ", ", kw, ") with dilation larger than the padded input (",
              h, ", ", w, ")");
  const int64_t cg = c / groups;
  const auto s = padded.strides();
  // (n, groups, c/groups, kh, kw, oh, ow) as a view of the padded input; reshape copies it (im2col).
  const at::Tensor cols =
      padded.as_strided({n, groups, cg, kh, kw, oh, ow},
                        {s[0], cg * s[1], s[1], dilation[0] * s[2], dilation[1] * s[3], stride[0] * s[2], stride[1] * s[3]},
                        padded.storage_offset())
          .reshape({n, groups, cg * kh * kw, oh * ow});
  at::Tensor out = at::matmul(weight.reshape({groups, o / groups, cg * kh * kw}), cols).reshape({n, o, oh, ow});
  if (bias.has_value() && bias->defined()) out.add_(bias->reshape({1, o, 1, 1}));
  return out;
}

at::Tensor convolution(const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                       at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed,
                       at::IntArrayRef output_padding, int64_t groups) {
  if (native_conv2d(input, weight, transposed, stride, padding, dilation))
    return conv2d_im2col(input, weight, bias, stride, padding, dilation, groups);
  enter_fallback("aten::convolution_overrideable", describe(input));
  const at::Tensor b = bias.has_value() ? host(*bias) : at::Tensor();
  return at::convolution(host(input), host(weight), b, stride, padding, dilation, transposed, output_padding, groups)
      .to(input.device());
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> convolution_backward(
    const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& weight, at::IntArrayRef stride,
    at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed, at::IntArrayRef output_padding,
    int64_t groups, std::array<bool, 3> output_mask) {
  enter_fallback("aten::convolution_backward_overrideable", describe(input));
  const std::vector<int64_t> bias_sizes = {weight.size(transposed ? 1 : 0) * (transposed ? groups : 1)};
  auto [grad_input, grad_weight, grad_bias] =
      at::convolution_backward(host(grad_output), host(input), host(weight), bias_sizes, stride, padding, dilation,
                               transposed, output_padding, groups, output_mask);
  auto back = [&](const at::Tensor& t) { return t.defined() ? t.to(input.device()) : t; };
  return {back(grad_input), back(grad_weight), back(grad_bias)};
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("convolution_overrideable", TORCH_FN(convolution));
  m.impl("convolution_backward_overrideable", TORCH_FN(convolution_backward));
}

} // namespace
} // namespace torch_dml::aten
