// 2-D upsampling (nearest, nearest-exact, bilinear) of NCHW-contiguous float32/float16/bfloat16/
// float64 tensors and its backward, computed in float32 (float64 in float64; kernels/wgsl/upsample.wgsl). The host picks each
// axis' index rule and scale with PyTorch's own functions; the kernel applies them per element.
#pragma once

#include <string>

#include "kernels/tensor_ref.h"
#include "runtime/device.h"

namespace torch_dml::kernels {

enum class UpsampleMode : uint32_t { Nearest = 0, NearestExact = 1, Bilinear = 2 };

// How one axis maps output indices to input indices (the values of RULE_* in upsample.wgsl).
enum class UpsampleRule : uint32_t { Identity = 0, Half = 1, Scaled = 2 };

struct UpsampleAxis {
  uint64_t in = 0;  // size in the forward op's input
  uint64_t out = 0; // and output
  UpsampleRule rule = UpsampleRule::Scaled;
  double scale = 0; // input step per output step: a float32 value unless bilinear on float64
};

struct UpsampleProblem {
  UpsampleMode mode = UpsampleMode::Nearest;
  bool backward = false;
  bool align_corners = false; // bilinear only
  uint64_t planes = 0;        // batch * channels
  UpsampleAxis h, w;
  DeviceTensorRef dst; // forward: the output; backward: grad_input (contiguous, first element on a word)
  DeviceTensorRef src; // forward: the input; backward: grad_output (contiguous)
};

std::string upsample_unsupported_reason(runtime::DeviceContext& context, const UpsampleProblem& problem);
void upsample(runtime::DeviceContext& context, const UpsampleProblem& problem);

} // namespace torch_dml::kernels
