// Layer normalisation over contiguous rows: forward (output, mean, rstd) and the input-gradient pass of
// backward, a workgroup per row with float32 arithmetic. The weight/bias gradients are column sums,
// which the caller takes with the reduce kernel from the `weighted` output here.
#pragma once

#include <optional>

#include <string>

#include "kernels/tensor_ref.h"

namespace torch_dml::kernels {

struct LayerNormForward {
  uint64_t rows = 0, length = 0;
  float eps = 1e-5f;
  DeviceTensorRef input;                         // float32 / float16 / bfloat16
  std::optional<DeviceTensorRef> weight, bias;   // `length` elements, the input's dtype
  DeviceTensorRef out, mean, rstd;               // float32, contiguous
};

struct LayerNormBackward {
  uint64_t rows = 0, length = 0;
  DeviceTensorRef grad, input;                   // the input's dtype
  DeviceTensorRef mean, rstd;                    // float32, one per row
  std::optional<DeviceTensorRef> weight;
  DeviceTensorRef grad_input;                    // float32, contiguous
  DeviceTensorRef weighted;                      // float32, contiguous: grad * normalised input
};

std::string layer_norm_unsupported_reason(runtime::DeviceContext& context, c10::ScalarType type, uint64_t elements);
void layer_norm_forward(runtime::DeviceContext& context, const LayerNormForward& problem);
void layer_norm_backward(runtime::DeviceContext& context, const LayerNormBackward& problem);

} // namespace torch_dml::kernels
