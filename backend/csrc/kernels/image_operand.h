// A 4-D operand of the image kernels (conv2d, max_pool2d): its buffer and its strides in elements, in
// torch's (n, c, h, w) order, so that every layout (NCHW, channels_last, a view) is read in place.
#pragma once

#include <cstdint>

#include "kernels/tensor_ref.h"

namespace torch_dml::kernels {

struct ImageOperand {
  DeviceTensorRef ref;
  int64_t strides[4] = {};
};

// Elements from the operand's first to the last one its strides reach over `sizes` (0 when empty).
uint64_t image_span(const ImageOperand& op, const uint64_t (&sizes)[4]);
// Whether every stride is non-negative and fits a u32 Params field.
bool image_strides_fit(const ImageOperand& op);
void put_image_strides(const ImageOperand& op, uint32_t* out);

} // namespace torch_dml::kernels
