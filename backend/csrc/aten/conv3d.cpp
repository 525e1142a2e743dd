#include "aten/conv3d.h"

#include <ATen/ATen.h>

#include <vector>

#include "kernels/dtypes.h"

namespace torch_dml::aten {
namespace {

struct Depth {
  int64_t in = 0, out = 0, kernel = 0, stride = 1, pad = 0, dilation = 1;
};

Depth depth_of(const at::Tensor& input, const at::Tensor& weight, at::IntArrayRef stride, at::IntArrayRef padding,
               at::IntArrayRef dilation) {
  Depth d{input.size(2), 0, weight.size(2), stride[0], padding[0], dilation[0]};
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
  const Depth d = depth_of(input, weight, stride, padding, dilation);
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
  const Depth d = depth_of(input, weight, stride, padding, dilation);
  const int64_t n = input.size(0), c = input.size(1), o = weight.size(0);
  TORCH_CHECK(grad_output.dim() == 5 && grad_output.size(0) == n && grad_output.size(1) == o &&
                  grad_output.size(2) == d.out,
              "conv3d backward: grad_output ", grad_output.sizes(), " does not match the convolution's output");
  const at::Tensor grad_images =
      grad_output.permute({0, 2, 1, 3, 4}).reshape({n * d.out, o, grad_output.size(3), grad_output.size(4)});
  const at::Tensor images = gathered(input, d, groups);
  const at::Tensor w2 = folded_weight(weight);
  auto [grad_gathered, grad_w2, grad_bias] =
      at::convolution_backward(grad_images, images, w2, std::vector<int64_t>{o}, spatial(stride), spatial(padding),
                               spatial(dilation), false, {0, 0}, groups, {mask[0], mask[1], mask[2]});
  at::Tensor grad_input, grad_weight;
  if (mask[1])
    grad_weight = grad_w2.view({o, weight.size(2), weight.size(1), weight.size(3), weight.size(4)})
                      .permute({0, 2, 1, 3, 4})
                      .contiguous();
  if (mask[0]) {
    // Each tap's gradient added back where it read: one tap's depths are distinct, so each add is
    // race-free; taps overlap only across adds.
    // Summed in float32 and rounded once, whatever the dtype.
    const int64_t h = input.size(3), w = input.size(4);
    at::Tensor padded = at::zeros({n, c, d.in + 2 * d.pad, h, w}, grad_gathered.options().dtype(c10::kFloat));
    const at::Tensor taps = grad_gathered.view({n, d.out, groups, d.kernel, c / groups, h, w});
    for (int64_t k = 0; k < d.kernel; ++k)
      tap(padded, d, k).add_(taps.select(3, k).permute({0, 2, 3, 1, 4, 5}).reshape({n, c, d.out, h, w}));
    grad_input = padded.narrow(2, d.pad, d.in).to(input.scalar_type(), false, true);
  }
  return {grad_input, grad_weight, grad_bias};
}

} // namespace torch_dml::aten
