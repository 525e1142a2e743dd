// The 2-D pooling kernels, one each way: max_pool2d (wgsl/max_pool2d.wgsl, max_pool2d_backward.wgsl)
// scans each output's window for the maximum and its flat input index, and gathers back into each
// input element the gradients of the outputs that saved it; avg_pool2d and adaptive_avg_pool2d
// (wgsl/avg_pool2d.wgsl, avg_pool2d_backward.wgsl) sum each window and divide as the CPU does, and
// gather back each output's share. Every operand is read or written through its strides. Values are
// written in the computation type (float32, or float64 for a float64 input): the caller rounds to a
// 16-bit dtype.
#pragma once

#include <c10/core/ScalarType.h>

#include <cstdint>
#include <string>

#include "kernels/image_operand.h"
#include "runtime/device.h"

namespace torch_dml::kernels {

enum class PoolKind { Max, Average, AdaptiveAverage };

struct Pool2dGeometry {
  uint64_t batch = 0, channels = 0, in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  // Unused by adaptive pooling, whose windows follow from the sizes; dilation is max_pool2d's alone.
  uint64_t kernel[2] = {1, 1}, stride[2] = {1, 1}, padding[2] = {0, 0}, dilation[2] = {1, 1};
};

struct Pool2dProblem {
  PoolKind kind = PoolKind::Max;
  Pool2dGeometry g;
  c10::ScalarType dtype = c10::kFloat; // the input's (and grad_output's) dtype
  // Whether the image is stored channels_last: threads then walk channels fastest (speed only).
  bool channels_fast = false;
  bool backward = false;
  // avg_pool2d's divisor rule: the padded window's area, or divisor_override where it is not 0.
  bool count_include_pad = true;
  int64_t divisor_override = 0;
  ImageOperand image;   // forward: the input (dtype); backward: grad_input (computation type), written
  ImageOperand pooled;  // forward: the values (computation type), written; backward: grad_output (dtype)
  ImageOperand indices; // max_pool2d's int64 indices, bound as u32 words: ref and strides in words
};

// "" when the kernel takes the problem, else why not (the caller falls back before writing anything).
std::string pool2d_unsupported_reason(runtime::DeviceContext& context, const Pool2dProblem& m);
void pool2d(runtime::DeviceContext& context, const Pool2dProblem& m);

} // namespace torch_dml::kernels
