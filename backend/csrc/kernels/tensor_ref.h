// What a kernel knows of a tensor operand: the buffer holding it, where it starts, and its dtype.
// Shapes and strides travel in each kernel's own Params.
#pragma once

#include <c10/core/ScalarType.h>

#include <cstdint>

#include "runtime/device.h"

namespace torch_dml::kernels {

// The most dimensions a strided kernel takes (copy, fill, elementwise, reductions): TensorIterator
// coalesces dimensions first, so more is rare; above it the op takes its fallback.
constexpr int kMaxRank = 8;

struct DeviceTensorRef {
  WGPUBuffer buffer = nullptr;
  uint64_t buffer_size = 0;    // bytes of the whole buffer (bound from its start)
  uint64_t element_offset = 0; // first element, counted in this tensor's elements from the buffer start
  c10::ScalarType dtype = c10::kFloat;
};

} // namespace torch_dml::kernels
