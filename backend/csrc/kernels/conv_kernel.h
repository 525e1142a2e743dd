// conv2d on float32/float16/bfloat16 without im2col: the forward pass, grad_input and grad_weight as
// implicit GEMMs (wgsl/conv2d.wgsl) reading every operand through its strides, and direct kernels for
// depthwise convolutions' forward and grad_input (wgsl/conv2d_depthwise.wgsl) and grad_weight
// (wgsl/conv2d_depthwise_weight.wgsl). Each writes float32 (the caller rounds a 16-bit result once);
// grad_weight over a long batch runs split-K, its partials added in a fixed order.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "kernels/image_operand.h"
#include "runtime/device.h"

namespace torch_dml::kernels {

using ConvOperand = ImageOperand;

struct Conv2dGeometry {
  uint64_t batch = 0, in_channels = 0, out_channels = 0, groups = 1;
  uint64_t in_h = 0, in_w = 0, out_h = 0, out_w = 0, kernel_h = 0, kernel_w = 0;
  uint64_t stride[2] = {1, 1}, padding[2] = {0, 0}, dilation[2] = {1, 1};
};

enum class ConvPass { Forward, GradInput, GradWeight };

struct Conv2dProblem {
  ConvPass pass = ConvPass::Forward;
  Conv2dGeometry g;
  // Whether the tensors are channels_last: picks the K order and load pattern, never correctness.
  bool channels_last = false;
  ConvOperand input;       // Forward, GradWeight
  ConvOperand weight;      // Forward, GradInput
  ConvOperand grad_output; // GradInput, GradWeight
  ConvOperand out;         // float32: the output, grad_input or grad_weight
  std::optional<DeviceTensorRef> bias; // Forward: added to each output channel
};

// "" when the kernels take the problem; otherwise why not (dtype, sizes beyond 32-bit indices or a
// dispatch, an operand beyond one storage binding).
std::string conv2d_unsupported_reason(runtime::DeviceContext& context, const Conv2dProblem& problem);
void conv2d(runtime::DeviceContext& context, const Conv2dProblem& problem);

// Whether the depthwise kernels run the problem: groups == in_channels, one input channel per group
// (any channel multiplier). grad_weight falls to the GEMM where its kernel cannot take the problem.
bool conv2d_is_depthwise(const Conv2dGeometry& g);

} // namespace torch_dml::kernels
