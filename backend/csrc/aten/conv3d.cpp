#include "aten/conv3d.h"

#include <ATen/ATen.h>

#include <vector>

#include "aten/widen.h"
#include "kernels/dtypes.h"

namespace torch_dml::aten {
namespace {

struct Depth {
  int64_t in = 0, out = 0, kernel = 0, stride = 1, pad = 0, dilation = 1;
};

Depth depth_of(int64_t in, const at::Tensor& weight, at::IntArrayRef stride, at::IntArrayRef padding,
               at::IntArrayRef dilation) {
  Depth d{in, 0, weight.size(2), stride[0], padding[0], dilation[0]};
  d.out = (d.in + 2 * d.pad - d.dilation * (d.kernel - 1) - 1) / d.stride + 1;
  TORCH_CHECK(d.out > 0, "conv3d: kernel depth ", d.kernel, " with dilation ", d.dilation,
              " is larger than the padded input depth ", d.in + 2 * d.pad);
  return d;
}

// The depth-padded input's slice that tap k reads for every output depth: (n, c, out depth, h, w).
at::Tensor tap(const at::Tensor& padded, const Depth& d, int64_t k) {
  return padded.narrow(2, k * d.dilation, (d.out - 1) * d.stride + 1).slice(2, 0, c10::nullopt, d.stride);
}

// (n * out depth, groups * KD * c/groups, h, w): channel (g, k, c) of image (n, d) is input channel
// g * c/groups + c at depth d * stride + k * dilation - pad.
at::Tensor gathered(const at::Tensor& input, const Depth& d, int64_t groups) {
  const at::Tensor padded = d.pad ? at::constant_pad_nd(input, {0, 0, 0, 0, d.pad, d.pad}, 0) : input;
  std::vector<at::Tensor> taps;
  for (int64_t k = 0; k < d.kernel; ++k) taps.push_back(tap(padded, d, k));
  const int64_t n = input.size(0), c = input.size(1), h = input.size(3), w = input.size(4);
  // (n, c, out, h, w) x KD -> (n, out, g, KD, c/g, h, w)
  return at::stack(taps, 0)
      .view({d.kernel, n, groups, c / groups, d.out, h, w})
      .permute({1, 4, 2, 0, 3, 5, 6})
      .reshape({n * d.out, groups * d.kernel * (c / groups), h, w});
}

// (o, c/g, KD, kh, kw) -> (o, KD * c/g, kh, kw), the gathered channels' order within a group.
at::Tensor folded_weight(const at::Tensor& weight) {
  return weight.permute({0, 2, 1, 3, 4}).reshape(
      {weight.size(0), weight.size(2) * weight.size(1), weight.size(3), weight.size(4)});
}

at::IntArrayRef spatial(at::IntArrayRef v) {
  return v.slice(1);
}

// (n, o, out, oh, ow) -> (n * out, o, oh, ow): a 3-D output gradient as the 2-D convolution's.
at::Tensor as_images(const at::Tensor& grad) {
  return grad.permute({0, 2, 1, 3, 4}).reshape({grad.size(0) * grad.size(2), grad.size(1), grad.size(3), grad.size(4)});
}

// conv3d's input gradient for an input of `sizes` (n, c, d, h, w): the gathered channels' gradient,
// which the 2-D convolution's input pass computes from the images' shape alone (a stand-in of that
// shape, no gather), each tap added back where it read, summed in float32 (returned so, or rounded once
// to the gradient's dtype).
at::Tensor input_gradient(const at::Tensor& grad_images, at::IntArrayRef sizes, const at::Tensor& weight,
                          const Depth& d, at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation,
                          int64_t groups, bool in_float32 = false) {
  const int64_t n = sizes[0], c = sizes[1], h = sizes[3], w = sizes[4];
  // A 16-bit convolution runs in float32 here: its result is summed over the taps before the one rounding.
  const at::Tensor grad = widened(grad_images);
  const at::Tensor images_shape =
      at::empty({1, 1, 1, 1}, grad.options()).expand({n * d.out, groups * d.kernel * (c / groups), h, w});
  const at::Tensor folded = folded_weight(widened(weight));
  const at::Tensor grad_gathered = std::get<0>(
      at::convolution_backward(grad, images_shape, folded, std::nullopt, spatial(stride), spatial(padding),
                               spatial(dilation), false, {0, 0}, groups, {true, false, false}));
  // One tap's depths are distinct, so each add is race-free; taps overlap only across adds.
  at::Tensor padded = at::zeros({n, c, d.in + 2 * d.pad, h, w}, grad_gathered.options().dtype(c10::kFloat));
  const at::Tensor taps = grad_gathered.view({n, d.out, groups, d.kernel, c / groups, h, w});
  for (int64_t k = 0; k < d.kernel; ++k)
    tap(padded, d, k).add_(taps.select(3, k).permute({0, 2, 3, 1, 4, 5}).reshape({n, c, d.out, h, w}));
  const at::Tensor sums = padded.narrow(2, d.pad, d.in);
  return in_float32 ? sums.contiguous() : sums.to(grad_images.scalar_type(), false, true);
}

} // namespace

bool native_conv3d(const at::Tensor& input, const at::Tensor& weight, bool transposed, at::IntArrayRef stride,
                   at::IntArrayRef padding, at::IntArrayRef dilation) {
  const auto type = input.scalar_type();
  if (transposed || !kernels::is_float_family(type) || input.dim() != 5 || weight.dim() != 5 ||
      weight.scalar_type() != type || stride.size() != 3 || padding.size() != 3 || dilation.size() != 3)
    return false;
  for (int i = 0; i < 3; ++i)
    if (stride[i] < 1 || padding[i] < 0 || dilation[i] < 1) return false;
  return true;
}

at::Tensor conv3d_forward(const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                          at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation, int64_t groups) {
  TORCH_CHECK(groups > 0 && input.size(1) % groups == 0 && weight.size(0) % groups == 0 &&
                  weight.size(1) * groups == input.size(1),
              "conv3d: expected weight of shape (out_channels, ", input.size(1) / std::max<int64_t>(groups, 1),
              ", kd, kh, kw) for ", input.size(1), " input channels and groups=", groups, ", got ", weight.sizes());
  const Depth d = depth_of(input.size(2), weight, stride, padding, dilation);
  const at::Tensor images = at::convolution(gathered(input, d, groups), folded_weight(weight), bias, spatial(stride),
                                            spatial(padding), spatial(dilation), false, {0, 0}, groups);
  // (n * out, o, oh, ow) -> (n, o, out, oh, ow)
  return images.view({input.size(0), d.out, weight.size(0), images.size(2), images.size(3)})
      .permute({0, 2, 1, 3, 4})
      .contiguous();
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> conv3d_backward(
    const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& weight, at::IntArrayRef stride,
    at::IntArrayRef padding, at::IntArrayRef dilation, int64_t groups, std::array<bool, 3> mask) {
  const Depth d = depth_of(input.size(2), weight, stride, padding, dilation);
  const int64_t n = input.size(0), o = weight.size(0);
  TORCH_CHECK(grad_output.dim() == 5 && grad_output.size(0) == n && grad_output.size(1) == o &&
                  grad_output.size(2) == d.out,
              "conv3d backward: grad_output ", grad_output.sizes(), " does not match the convolution's output");
  const at::Tensor grad_images = as_images(grad_output);
  at::Tensor grad_input, grad_weight, grad_bias;
  if (mask[1] || mask[2]) {
    at::Tensor grad_w2;
    std::tie(std::ignore, grad_w2, grad_bias) = at::convolution_backward(
        grad_images, gathered(input, d, groups), folded_weight(weight), std::vector<int64_t>{o}, spatial(stride),
        spatial(padding), spatial(dilation), false, {0, 0}, groups, {false, mask[1], mask[2]});
    if (mask[1])
      grad_weight = grad_w2.view({o, weight.size(2), weight.size(1), weight.size(3), weight.size(4)})
                        .permute({0, 2, 1, 3, 4})
                        .contiguous();
  }
  if (mask[0]) grad_input = input_gradient(grad_images, input.sizes(), weight, d, stride, padding, dilation, groups);
  return {grad_input, grad_weight, grad_bias};
}

bool native_conv_transpose3d(const at::Tensor& input, const at::Tensor& weight, bool transposed, at::IntArrayRef stride,
                             at::IntArrayRef padding, at::IntArrayRef dilation, at::IntArrayRef output_padding) {
  if (!transposed || output_padding.size() != 3 || !native_conv3d(input, weight, false, stride, padding, dilation))
    return false;
  for (int i = 0; i < 3; ++i)
    if (output_padding[i] < 0 || output_padding[i] >= stride[i]) return false; // beyond: the CPU's
  return true;
}

// The transposed output's sizes: the input of the conv3d whose input gradient the transposed one is.
std::vector<int64_t> transposed_sizes(const at::Tensor& x, const at::Tensor& weight, at::IntArrayRef stride,
                                      at::IntArrayRef padding, at::IntArrayRef output_padding,
                                      at::IntArrayRef dilation, int64_t groups) {
  TORCH_CHECK(groups > 0 && weight.size(0) == x.size(1) && x.size(1) % groups == 0,
              "conv_transpose3d: expected weight of shape (", x.size(1), ", out_channels / groups, kd, kh, kw) for ",
              x.size(1), " input channels and groups=", groups, ", got ", weight.sizes());
  std::vector<int64_t> sizes = {x.size(0), weight.size(1) * groups};
  for (int i = 0; i < 3; ++i) {
    sizes.push_back((x.size(2 + i) - 1) * stride[i] - 2 * padding[i] + dilation[i] * (weight.size(2 + i) - 1) +
                    output_padding[i] + 1);
    TORCH_CHECK(sizes.back() > 0, "conv_transpose3d: the output of input ", x.sizes(), " and weight ",
                weight.sizes(), " would have size ", sizes.back(), " along dimension ", 2 + i);
  }
  return sizes;
}

at::Tensor conv_transpose3d_forward(const at::Tensor& x, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                                    at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef output_padding,
                                    at::IntArrayRef dilation, int64_t groups) {
  const std::vector<int64_t> sizes = transposed_sizes(x, weight, stride, padding, output_padding, dilation, groups);
  const Depth d = depth_of(sizes[2], weight, stride, padding, dilation);
  TORCH_INTERNAL_ASSERT(d.out == x.size(2));
  // The bias added in float32 too, one rounding in all.
  at::Tensor out = input_gradient(as_images(x), sizes, weight, d, stride, padding, dilation, groups, true);
  if (bias.has_value() && bias->defined()) out.add_(bias->reshape({1, sizes[1], 1, 1, 1}));
  return out.to(x.scalar_type());
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> conv_transpose3d_backward(
    const at::Tensor& grad_output, const at::Tensor& x, const at::Tensor& weight, at::IntArrayRef stride,
    at::IntArrayRef padding, at::IntArrayRef dilation, int64_t groups, std::array<bool, 3> mask) {
  at::Tensor grad_x, grad_weight, grad_bias;
  if (mask[0]) grad_x = conv3d_forward(grad_output, weight, std::nullopt, stride, padding, dilation, groups);
  if (mask[1])
    grad_weight =
        std::get<1>(conv3d_backward(x, grad_output, weight, stride, padding, dilation, groups, {false, true, false}));
  if (mask[2]) grad_bias = grad_output.sum({0, 2, 3, 4}, false, c10::kFloat).to(x.scalar_type());
  return {grad_x, grad_weight, grad_bias};
}

} // namespace torch_dml::aten
