// Layer normalisation over contiguous rows: forward (output, mean, rstd) and the input-gradient pass of
// backward, float32 arithmetic (float64 for float64, on adapters with shader-f64 and shader-int64). Rows
// up to 4096 elements (8192 float32 rows that load as vec4) are held whole by a team of lanes
// (kernels/held_row.h): read once, written once in the output's dtype; longer rows take a workgroup
// each, which writes float32 (float64). The weight/bias gradients are column sums, which the caller
// takes with the reduce kernel from the `weighted` output here.
#pragma once

#include <optional>

#include <string>

#include "kernels/tensor_ref.h"

namespace torch_dml::kernels {

struct LayerNormForward {
  uint64_t rows = 0, length = 0;
  double eps = 1e-5;
  DeviceTensorRef input;                         // float32 / float16 / bfloat16 / float64
  std::optional<DeviceTensorRef> weight, bias;   // `length` elements, the input's dtype
  DeviceTensorRef out;                           // contiguous: float32 (float64 for float64), or the
                                                 // input's dtype where layer_norm_forward_stores() says so
  DeviceTensorRef mean, rstd;                    // float32 (float64 for float64), contiguous
};

struct LayerNormBackward {
  uint64_t rows = 0, length = 0;
  DeviceTensorRef grad, input;                   // the input's dtype
  DeviceTensorRef mean, rstd;                    // float32 (float64 for float64), one per row
  std::optional<DeviceTensorRef> weight;
  DeviceTensorRef grad_input;                    // contiguous: float32 (float64 for float64), or the
                                                 // input's dtype where layer_norm_backward_stores() says so
  std::optional<DeviceTensorRef> weighted;       // float32 (float64), contiguous: grad * normalised input; may be
                                                 // left out where layer_norm_backward_stores() says so
};

std::string layer_norm_unsupported_reason(runtime::DeviceContext& context, c10::ScalarType type, uint64_t elements);
// Whether the kernels can write the problem's outputs as given (dtype, alignment, `weighted` left out).
bool layer_norm_forward_stores(runtime::DeviceContext& context, const LayerNormForward& problem);
bool layer_norm_backward_stores(runtime::DeviceContext& context, const LayerNormBackward& problem);

void layer_norm_forward(runtime::DeviceContext& context, const LayerNormForward& problem);
void layer_norm_backward(runtime::DeviceContext& context, const LayerNormBackward& problem);

} // namespace torch_dml::kernels
