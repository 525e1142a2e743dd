// Convolutions. A backend outside ATen receives conv1d/2d/3d (and transposed ones) as
// convolution_overrideable, whose default raises rather than reaching the boxed CPU fallback, and whose
// CPU counterpart is not registered under that name.
//
// conv2d in float32/float16/bfloat16, forward and backward, is native on the conv kernels
// (kernels/conv_kernel.h): implicit GEMMs that read the input's patches in place, in NCHW or
// channels_last, and a direct depthwise kernel. A problem those kernels cannot take (more output tiles
// than one dispatch holds, an operand beyond one storage binding) is composed from native ops instead:
// the input's patches gathered by one strided view + copy (im2col), and batched matmuls.
// A transposed convolution is the gradient of a convolution with respect to its input, so the same
// kernels run it: its forward pass is that convolution's grad_input pass, its input gradient that
// convolution's forward pass, its weight gradient that convolution's grad_weight pass with the roles of
// input and output gradient swapped (conv_transpose1d arrives here as a 2-D one: ATen views 1-D
// convolutions as 2-D).
// conv3d folds its depth taps into a 2-D convolution's channels, and conv_transpose3d is its input
// gradient (aten/conv3d.h).
// Other ranks and dtypes route to at::convolution(_backward) on the CPU by hand, with the fallback's
// bookkeeping (counted, warned, refused in strict mode).
#include <ATen/ops/constant_pad_nd.h>
#include <ATen/ops/convolution.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/convolution_backward.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/zeros.h>
#include <torch/library.h>

#include <sstream>
#include <tuple>
#include <vector>

#include "aten/common.h"
#include "aten/conv3d.h"
#include "aten/fallback.h"
#include "kernels/conv_kernel.h"
#include "kernels/dtypes.h"

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

bool valid_stride(at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation) {
  for (int d = 0; d < 2; ++d)
    if (stride[d] < 1 || padding[d] < 0 || dilation[d] < 1) return false;
  return true;
}

bool native_conv2d(const at::Tensor& input, const at::Tensor& weight, bool transposed, at::IntArrayRef stride,
                   at::IntArrayRef padding, at::IntArrayRef dilation, at::IntArrayRef output_padding) {
  const auto type = input.scalar_type();
  return kernels::is_float_family(type) && input.dim() == 4 && weight.dim() == 4 && weight.scalar_type() == type &&
      stride.size() == 2 && padding.size() == 2 && dilation.size() == 2 && valid_stride(stride, padding, dilation) &&
      (!transposed || output_padding.size() == 2);
}

struct Conv2dShape {
  int64_t n, c, o, kh, kw, h, w, oh, ow, groups, cg; // h, w: padded
};

Conv2dShape conv2d_shape(at::IntArrayRef input, const at::Tensor& weight, at::IntArrayRef stride,
                         at::IntArrayRef padding, at::IntArrayRef dilation, int64_t groups) {
  Conv2dShape g{};
  g.n = input[0], g.c = input[1], g.o = weight.size(0), g.kh = weight.size(2), g.kw = weight.size(3);
  TORCH_CHECK(groups > 0 && g.c % groups == 0 && g.o % groups == 0 && weight.size(1) * groups == g.c,
              "conv2d: expected weight of shape (", g.o, ", ", g.c / std::max<int64_t>(groups, 1), ", kh, kw) for ",
              g.c, " input channels and groups=", groups, ", got ", weight.sizes());
  g.h = input[2] + 2 * padding[0], g.w = input[3] + 2 * padding[1];
  g.oh = (g.h - dilation[0] * (g.kh - 1) - 1) / stride[0] + 1;
  g.ow = (g.w - dilation[1] * (g.kw - 1) - 1) / stride[1] + 1;
  TORCH_CHECK(g.oh > 0 && g.ow > 0, "conv2d: kernel (", g.kh, ", ", g.kw, ") with dilation larger than the padded input (",
              g.h, ", ", g.w, ")");
  g.groups = groups, g.cg = g.c / groups;
  return g;
}

// (n, groups, c/groups, kh, kw, oh, ow): every output position's patch, as a view of the padded tensor
// (its strides times the stride / dilation), starting at kernel offset (i, j) = (0, 0).
at::Tensor patches(const at::Tensor& padded, const Conv2dShape& g, at::IntArrayRef stride, at::IntArrayRef dilation) {
  const auto s = padded.strides();
  return padded.as_strided(
      {g.n, g.groups, g.cg, g.kh, g.kw, g.oh, g.ow},
      {s[0], g.cg * s[1], s[1], dilation[0] * s[2], dilation[1] * s[3], stride[0] * s[2], stride[1] * s[3]},
      padded.storage_offset());
}

at::Tensor zero_padded(const at::Tensor& input, at::IntArrayRef padding) {
  return (padding[0] || padding[1]) ? at::constant_pad_nd(input, {padding[1], padding[1], padding[0], padding[0]}, 0)
                                    : input;
}

// float16 / bfloat16 convolutions compute in float32 and round once at the end, as the CPU's kernels
// accumulate: rounding each composed step (the GEMM, then the bias; each batch's weight gradient, then
// their sum; each kernel offset's input gradient) doubled the error against a float64 reference.
at::Tensor widened(const at::Tensor& t) {
  return t.defined() && t.scalar_type() != c10::kFloat ? t.to(c10::kFloat) : t;
}

at::Tensor narrowed(const at::Tensor& t, c10::ScalarType type) {
  return t.defined() && t.scalar_type() != type ? t.to(type) : t;
}

at::Tensor conv2d_im2col(const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                         at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation, int64_t groups) {
  const c10::ScalarType type = input.scalar_type();
  if (type != c10::kFloat) {
    const std::optional<at::Tensor> wide_bias =
        bias.has_value() && bias->defined() ? std::optional<at::Tensor>(widened(*bias)) : std::nullopt;
    return narrowed(conv2d_im2col(widened(input), widened(weight), wide_bias, stride, padding, dilation, groups), type);
  }
  const Conv2dShape g = conv2d_shape(input.sizes(), weight, stride, padding, dilation, groups);
  const at::Tensor cols = patches(zero_padded(input, padding), g, stride, dilation)  // reshape copies: im2col
                              .reshape({g.n, g.groups, g.cg * g.kh * g.kw, g.oh * g.ow});
  at::Tensor out = at::matmul(weight.reshape({g.groups, g.o / g.groups, g.cg * g.kh * g.kw}), cols)
                       .reshape({g.n, g.o, g.oh, g.ow});
  if (bias.has_value() && bias->defined()) out.add_(bias->reshape({1, g.o, 1, 1}));
  return out;
}

// Gradients from the same columns: weight = grad_out x columns^T summed over the batch; input = the
// columns' gradient (weight^T x grad_out) added back into the padded input one kernel offset at a time
// (within one offset, output positions map to distinct input elements, so each add is race-free).
// `input` (of `input_sizes`) is read for the weight gradient only: a transposed convolution's forward
// pass asks for the input gradient of an input that does not exist.
std::tuple<at::Tensor, at::Tensor, at::Tensor> conv2d_im2col_backward(
    const at::Tensor& grad_output, const at::Tensor& input, at::IntArrayRef input_sizes, const at::Tensor& weight,
    at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation, int64_t groups,
    std::array<bool, 3> mask) {
  const c10::ScalarType type = grad_output.scalar_type();
  if (type != c10::kFloat) {
    auto [grad_input, grad_weight, grad_bias] = conv2d_im2col_backward(
        widened(grad_output), widened(input), input_sizes, widened(weight), stride, padding, dilation, groups, mask);
    return {narrowed(grad_input, type), narrowed(grad_weight, type), narrowed(grad_bias, type)};
  }
  const Conv2dShape g = conv2d_shape(input_sizes, weight, stride, padding, dilation, groups);
  const int64_t ck = g.cg * g.kh * g.kw, l = g.oh * g.ow;
  const at::Tensor go = grad_output.reshape({g.n, g.groups, g.o / g.groups, l});
  at::Tensor grad_input, grad_weight, grad_bias;
  if (mask[2]) grad_bias = grad_output.sum({0, 2, 3});
  if (mask[1]) {
    const at::Tensor cols = patches(zero_padded(input, padding), g, stride, dilation).reshape({g.n, g.groups, ck, l});
    grad_weight = at::matmul(go, cols.transpose(-1, -2)).sum(0).reshape(weight.sizes());
  }
  if (mask[0]) {
    const at::Tensor grad_cols = at::matmul(weight.reshape({g.groups, g.o / g.groups, ck}).transpose(-1, -2), go)
                                     .reshape({g.n, g.groups, g.cg, g.kh, g.kw, g.oh, g.ow});
    at::Tensor padded = at::zeros({g.n, g.c, g.h, g.w}, grad_output.options());
    const at::Tensor view = patches(padded, g, stride, dilation);
    for (int64_t i = 0; i < g.kh; ++i)
      for (int64_t j = 0; j < g.kw; ++j) view.select(3, i).select(3, j).add_(grad_cols.select(3, i).select(3, j));
    grad_input = padded.narrow(2, padding[0], input_sizes[2]).narrow(3, padding[1], input_sizes[3]).contiguous();
  }
  return {grad_input, grad_weight, grad_bias};
}

kernels::Conv2dGeometry geometry(const Conv2dShape& s, at::IntArrayRef stride, at::IntArrayRef padding,
                                 at::IntArrayRef dilation) {
  kernels::Conv2dGeometry g;
  g.batch = s.n, g.in_channels = s.c, g.out_channels = s.o, g.groups = s.groups;
  g.in_h = s.h - 2 * padding[0], g.in_w = s.w - 2 * padding[1], g.out_h = s.oh, g.out_w = s.ow;
  g.kernel_h = s.kh, g.kernel_w = s.kw;
  for (int d = 0; d < 2; ++d) g.stride[d] = stride[d], g.padding[d] = padding[d], g.dilation[d] = dilation[d];
  return g;
}

// The layout of a convolution's output and gradients: contiguous, whatever the inputs'. That is what
// torch's fake tensors promise for a backend outside ATen (_conv_determine_backend_memory_format gives
// the Overrideable backend contiguous), and torch.compile checks the strides it was promised: a
// channels_last output failed a compiled ResNet's assert_size_stride.
constexpr at::MemoryFormat kConvMemoryFormat = at::MemoryFormat::Contiguous;

// Whether the inputs are channels_last, which picks the kernels' K order and load pattern (coalesced
// NHWC reads), not the output's layout.
bool reads_channels_last(const at::Tensor& input, const at::Tensor& weight) {
  return input.suggest_memory_format() == at::MemoryFormat::ChannelsLast ||
      weight.suggest_memory_format() == at::MemoryFormat::ChannelsLast;
}

// float32 scratch in `format` for a kernel's result, rounded once to `type` by the caller.
at::Tensor float_result(at::IntArrayRef sizes, const at::Tensor& like, at::MemoryFormat format) {
  return at::empty(sizes, like.options().dtype(c10::kFloat).memory_format(format));
}

at::Tensor conv2d_forward(const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                          at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation, int64_t groups) {
  const Conv2dShape s = conv2d_shape(input.sizes(), weight, stride, padding, dilation, groups);
  const c10::ScalarType type = input.scalar_type();
  const at::MemoryFormat format = kConvMemoryFormat;
  at::Tensor out = float_result({s.n, s.o, s.oh, s.ow}, input, format);
  const bool with_bias = bias.has_value() && bias->defined();
  const at::Tensor b = with_bias ? bias->contiguous() : at::Tensor();
  TORCH_CHECK(!with_bias || (b.dim() == 1 && b.size(0) == s.o && b.scalar_type() == type),
              "conv2d: expected a bias of ", s.o, " ", type, " elements, got ", b.sizes(), " ", b.scalar_type());
  if (out.numel() == 0) return narrowed(out, type);
  kernels::Conv2dProblem problem;
  problem.pass = kernels::ConvPass::Forward;
  problem.g = geometry(s, stride, padding, dilation);
  problem.channels_last = reads_channels_last(input, weight);
  problem.input = image_operand(input);
  problem.weight = image_operand(weight);
  problem.out = image_operand(out);
  if (with_bias) problem.bias = device_ref(b);
  runtime::DeviceContext& context = context_of(input);
  if (!kernels::conv2d_unsupported_reason(context, problem).empty())
    return conv2d_im2col(input, weight, bias, stride, padding, dilation, groups);
  kernels::conv2d(context, problem);
  return narrowed(out, type);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> conv2d_backward(
    const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& weight, at::IntArrayRef stride,
    at::IntArrayRef padding, at::IntArrayRef dilation, int64_t groups, std::array<bool, 3> mask) {
  const Conv2dShape s = conv2d_shape(input.sizes(), weight, stride, padding, dilation, groups);
  TORCH_CHECK(grad_output.dim() == 4 && grad_output.size(0) == s.n && grad_output.size(1) == s.o &&
                  grad_output.size(2) == s.oh && grad_output.size(3) == s.ow,
              "conv2d backward: expected grad_output of shape (", s.n, ", ", s.o, ", ", s.oh, ", ", s.ow, "), got ",
              grad_output.sizes());
  const c10::ScalarType type = input.scalar_type();
  const at::MemoryFormat format = kConvMemoryFormat;
  kernels::Conv2dProblem problem;
  problem.g = geometry(s, stride, padding, dilation);
  problem.channels_last = reads_channels_last(input, weight);
  problem.input = image_operand(input);
  problem.weight = image_operand(weight);
  problem.grad_output = image_operand(grad_output);
  runtime::DeviceContext& context = context_of(input);
  at::Tensor grad_input, grad_weight, grad_bias;
  if (mask[0]) {
    grad_input = float_result(input.sizes(), input, format);
    problem.pass = kernels::ConvPass::GradInput;
    problem.out = image_operand(grad_input);
    if (grad_input.numel() && !kernels::conv2d_unsupported_reason(context, problem).empty())
      return conv2d_im2col_backward(grad_output, input, input.sizes(), weight, stride, padding, dilation, groups, mask);
  }
  if (mask[1]) {
    grad_weight = float_result(weight.sizes(), weight, format);
    problem.pass = kernels::ConvPass::GradWeight;
    problem.out = image_operand(grad_weight);
    if (!kernels::conv2d_unsupported_reason(context, problem).empty())
      return conv2d_im2col_backward(grad_output, input, input.sizes(), weight, stride, padding, dilation, groups, mask);
  }
  if (mask[0] && grad_input.numel()) {
    problem.pass = kernels::ConvPass::GradInput;
    problem.out = image_operand(grad_input);
    kernels::conv2d(context, problem);
  }
  if (mask[1] && grad_weight.numel()) {
    problem.pass = kernels::ConvPass::GradWeight;
    problem.out = image_operand(grad_weight);
    kernels::conv2d(context, problem);
  }
  // Summed in float32 whatever the dtype, as the CPU's kernels do.
  if (mask[2]) grad_bias = grad_output.sum({0, 2, 3}, false, c10::kFloat);
  return {narrowed(grad_input, type), narrowed(grad_weight, type), narrowed(grad_bias, type)};
}

// conv_transpose2d: the input gradient of the convolution whose input has the transposed one's output
// sizes, with x as its output gradient. Output padding adds rows and columns that no window of that
// convolution reaches: their gradient, the transposed output there, is zero (then the bias). Output
// padding from dilation (allowed up to the dilation, beyond the stride) gives that convolution more
// output rows than x has: x's gradient there is zero, since no element of x reaches them.
at::Tensor zero_extended(const at::Tensor& t, int64_t h, int64_t w) {
  if (t.size(2) == h && t.size(3) == w) return t;
  return at::constant_pad_nd(t, {0, w - t.size(3), 0, h - t.size(2)}, 0);
}

at::Tensor conv_transpose2d_forward(const at::Tensor& x, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                                    at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef output_padding,
                                    at::IntArrayRef dilation, int64_t groups) {
  TORCH_CHECK(groups > 0 && weight.size(0) == x.size(1) && x.size(1) % groups == 0,
              "conv_transpose2d: expected weight of shape (", x.size(1), ", out_channels / groups, kh, kw) for ",
              x.size(1), " input channels and groups=", groups, ", got ", weight.sizes());
  std::vector<int64_t> sizes = {x.size(0), weight.size(1) * groups, 0, 0};
  for (int d = 0; d < 2; ++d) {
    TORCH_CHECK(output_padding[d] >= 0 && (output_padding[d] < stride[d] || output_padding[d] < dilation[d]),
                "conv_transpose2d: output padding must be smaller than either stride or dilation, got output_padding=",
                output_padding, ", stride=", stride, ", dilation=", dilation);
    sizes[2 + d] = (x.size(2 + d) - 1) * stride[d] - 2 * padding[d] + dilation[d] * (weight.size(2 + d) - 1) +
        output_padding[d] + 1;
    TORCH_CHECK(sizes[2 + d] > 0, "conv_transpose2d: the output of input ", x.sizes(), " and weight ", weight.sizes(),
                " would have size ", sizes[2 + d], " along dimension ", 2 + d);
  }
  const c10::ScalarType type = x.scalar_type();
  const bool with_bias = bias.has_value() && bias->defined();
  TORCH_CHECK(!with_bias || (bias->dim() == 1 && bias->size(0) == sizes[1] && bias->scalar_type() == type),
              "conv_transpose2d: expected a bias of ", sizes[1], " ", type, " elements, got ", bias->sizes(), " ",
              bias->scalar_type());
  const Conv2dShape s = conv2d_shape(sizes, weight, stride, padding, dilation, groups);
  TORCH_INTERNAL_ASSERT(s.oh >= x.size(2) && s.ow >= x.size(3));
  at::Tensor out = float_result(sizes, x, kConvMemoryFormat);
  if (out.numel() == 0) return narrowed(out, type);
  kernels::Conv2dProblem problem;
  problem.pass = kernels::ConvPass::GradInput;
  problem.g = geometry(s, stride, padding, dilation);
  problem.g.out_h = x.size(2), problem.g.out_w = x.size(3); // the kernel reads no row beyond them
  problem.channels_last = reads_channels_last(x, weight);
  problem.grad_output = image_operand(x);
  problem.weight = image_operand(weight);
  problem.out = image_operand(out);
  runtime::DeviceContext& context = context_of(x);
  if (kernels::conv2d_unsupported_reason(context, problem).empty())
    kernels::conv2d(context, problem);
  else
    out = std::get<0>(conv2d_im2col_backward(zero_extended(widened(x), s.oh, s.ow), at::Tensor(), sizes,
                                             widened(weight), stride, padding, dilation, groups, {true, false, false}));
  if (with_bias) out.add_(widened(*bias).reshape({1, sizes[1], 1, 1}));
  return narrowed(out, type);
}

// Its gradients: x's is the convolution of grad_out with the same weight; the weight's is that
// convolution's weight gradient with grad_out as its input and x as its output gradient.
std::tuple<at::Tensor, at::Tensor, at::Tensor> conv_transpose2d_backward(
    const at::Tensor& grad_output, const at::Tensor& x, const at::Tensor& weight, at::IntArrayRef stride,
    at::IntArrayRef padding, at::IntArrayRef dilation, int64_t groups, std::array<bool, 3> mask) {
  const c10::ScalarType type = x.scalar_type();
  const int64_t h = x.size(2), w = x.size(3);
  at::Tensor grad_x, grad_weight, grad_bias;
  if (mask[0]) {
    grad_x = conv2d_forward(grad_output, weight, std::nullopt, stride, padding, dilation, groups);
    if (grad_x.size(2) != h || grad_x.size(3) != w) grad_x = grad_x.narrow(2, 0, h).narrow(3, 0, w).contiguous();
  }
  if (mask[1]) {
    const Conv2dShape s = conv2d_shape(grad_output.sizes(), weight, stride, padding, dilation, groups);
    grad_weight = std::get<1>(conv2d_backward(zero_extended(x, s.oh, s.ow), grad_output, weight, stride, padding,
                                              dilation, groups, {false, true, false}));
  }
  if (mask[2]) grad_bias = narrowed(grad_output.sum({0, 2, 3}, false, c10::kFloat), type);
  return {grad_x, grad_weight, grad_bias};
}

at::Tensor convolution(const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                       at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed,
                       at::IntArrayRef output_padding, int64_t groups) {
  if (native_conv2d(input, weight, transposed, stride, padding, dilation, output_padding))
    return transposed ? conv_transpose2d_forward(input, weight, bias, stride, padding, output_padding, dilation, groups)
                      : conv2d_forward(input, weight, bias, stride, padding, dilation, groups);
  if (native_conv3d(input, weight, transposed, stride, padding, dilation))
    return conv3d_forward(input, weight, bias, stride, padding, dilation, groups);
  if (native_conv_transpose3d(input, weight, transposed, stride, padding, dilation, output_padding))
    return conv_transpose3d_forward(input, weight, bias, stride, padding, output_padding, dilation, groups);
  enter_fallback("aten::convolution_overrideable", describe(input));
  const at::Tensor b = bias.has_value() ? host(*bias) : at::Tensor();
  return at::convolution(host(input), host(weight), b, stride, padding, dilation, transposed, output_padding, groups)
      .to(input.device());
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> convolution_backward(
    const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& weight, at::IntArrayRef stride,
    at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed, at::IntArrayRef output_padding,
    int64_t groups, std::array<bool, 3> output_mask) {
  if (native_conv2d(input, weight, transposed, stride, padding, dilation, output_padding) &&
      grad_output.scalar_type() == input.scalar_type())
    return transposed ? conv_transpose2d_backward(grad_output, input, weight, stride, padding, dilation, groups, output_mask)
                      : conv2d_backward(grad_output, input, weight, stride, padding, dilation, groups, output_mask);
  if (native_conv3d(input, weight, transposed, stride, padding, dilation) &&
      grad_output.scalar_type() == input.scalar_type())
    return conv3d_backward(grad_output, input, weight, stride, padding, dilation, groups, output_mask);
  if (native_conv_transpose3d(input, weight, transposed, stride, padding, dilation, output_padding) &&
      grad_output.scalar_type() == input.scalar_type())
    return conv_transpose3d_backward(grad_output, input, weight, stride, padding, dilation, groups, output_mask);
  enter_fallback("aten::convolution_backward_overrideable", describe(input));
  const std::vector<int64_t> bias_sizes = {weight.size(transposed ? 1 : 0) * (transposed ? groups : 1)};
  auto [grad_input, grad_weight, grad_bias] =
      at::convolution_backward(host(grad_output), host(input), host(weight), bias_sizes, stride, padding, dilation,
                               transposed, output_padding, groups, output_mask);
  auto back = [&](const at::Tensor& t) { return t.defined() ? t.to(input.device()) : t; };
  return {back(grad_input), back(grad_weight), back(grad_bias)};
}

// Registered for dml from backend/ops/native.yaml (python -m backend.codegen).
#include "aten/generated/registrations/convolution_ops.inc"

} // namespace
} // namespace torch_dml::aten
