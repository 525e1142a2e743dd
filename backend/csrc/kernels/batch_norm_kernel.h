// Batch normalisation over an (outer, channels, inner) view of a dense input: NCHW (inner = the
// spatial size) or channels_last (inner = 1); group normalisation as its statistics over each sample's
// groups. Forward and backward are each a per-channel pass (a
// workgroup per channel: statistics or sums, in a fixed order) and a per-element pass applying the
// channel's coefficients. Arithmetic is float32 (float64 for float64 inputs).
#pragma once

#include <optional>
#include <string>

#include "kernels/tensor_ref.h"
#include "runtime/device.h"

namespace torch_dml::kernels {

struct BatchNormShape {
  uint64_t channels = 0;
  uint64_t inner = 1;  // elements of a channel that are adjacent in memory (1 for channels_last)
  uint64_t count = 0;  // elements per channel
};

struct BatchNormForward {
  BatchNormShape shape;
  bool training = true;
  double eps = 1e-5, momentum = 0.1;
  DeviceTensorRef input;                                 // float32 / float16 / bfloat16 / float64
  std::optional<DeviceTensorRef> weight, bias;           // `channels` elements, one dtype
  // The accumulation dtype (float32, or float64 for float64 input). Training updates them in place
  // when given; evaluation reads them.
  std::optional<DeviceTensorRef> running_mean, running_var;
  std::optional<DeviceTensorRef> save_mean, save_invstd; // accumulation dtype, training only
  DeviceTensorRef coef;                                  // accumulation dtype, 4 per affine channel
  DeviceTensorRef out;                                   // input's dtype and layout, at a word boundary
  // Group normalisation: `shape` has a statistic per (sample, group) (channels = N * groups, inner =
  // count = the group's elements), `affine` a channel per (sample, channel) (inner = the spatial
  // size), with group_channels channels per group; weight and bias are per channel.
  uint64_t group_channels = 1;
  uint64_t groups = 0;                                   // statistics per sample; 0: shape.channels
  std::optional<BatchNormShape> affine;
};

struct BatchNormBackward {
  BatchNormShape shape;
  bool training = true;
  double eps = 1e-5;
  DeviceTensorRef grad, input;        // one dtype, one layout
  DeviceTensorRef mean, spread;       // one dtype: save_mean / save_invstd, or running mean / var
  std::optional<DeviceTensorRef> weight;
  DeviceTensorRef grad_weight, grad_bias, coef; // accumulation dtype (coef: 4 per channel, scratch)
  std::optional<DeviceTensorRef> grad_input;    // input's dtype and layout, at a word boundary
};

// Why the kernels cannot take the problem on this adapter ("" when they can).
std::string batch_norm_forward_unsupported_reason(runtime::DeviceContext& context, const BatchNormForward& problem);
std::string batch_norm_backward_unsupported_reason(runtime::DeviceContext& context, const BatchNormBackward& problem);

void batch_norm_forward(runtime::DeviceContext& context, const BatchNormForward& problem);
void batch_norm_backward(runtime::DeviceContext& context, const BatchNormBackward& problem);

} // namespace torch_dml::kernels
