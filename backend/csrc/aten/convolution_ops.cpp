// Convolutions. A backend outside ATen receives conv1d/2d/3d (and transposed ones) as
// convolution_overrideable, whose default raises rather than reaching the boxed CPU fallback, and whose
// CPU counterpart is not registered under that name. Until a native kernel exists, these route to
// at::convolution on the CPU by hand, with the fallback's bookkeeping (counted, warned, refused in
// strict mode).
#include <ATen/ops/convolution.h>
#include <ATen/ops/convolution_backward.h>
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

at::Tensor convolution(const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                       at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed,
                       at::IntArrayRef output_padding, int64_t groups) {
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
