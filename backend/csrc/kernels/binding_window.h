// The part of a buffer a dispatch binds for one operand. Bindings stop at maxStorageBufferBindingSize
// (128 MiB on lavapipe, 2 GiB on NVIDIA), so an operand is bound from just below its first element to
// just past its last, and element indices in kernels are relative to that window (they stay 32-bit).
#pragma once

#include <cstdint>

#include "runtime/device.h"

namespace torch_dml::kernels {

struct Window {
  uint64_t offset = 0;         // bytes, a multiple of minStorageBufferOffsetAlignment
  uint64_t size = 0;           // bytes, a multiple of 4
  uint64_t element_offset = 0; // the operand's first element, relative to the window
};

// first/last: element indices (in `itemsize` units from the buffer start) of the operand's extent.
inline Window binding_window(runtime::DeviceContext& context, uint64_t buffer_size, uint64_t itemsize,
                             uint64_t first, uint64_t last) {
  const uint64_t alignment = context.limits().minStorageBufferOffsetAlignment;
  Window w;
  w.offset = first * itemsize / alignment * alignment;
  const uint64_t end = ((last + 1) * itemsize + 3) / 4 * 4;
  w.size = (end < buffer_size ? end : buffer_size) - w.offset;
  if (w.size < 4) w.size = 4;
  w.element_offset = first - w.offset / itemsize;
  return w;
}

inline bool fits_binding(runtime::DeviceContext& context, const Window& w) {
  return w.size <= context.limits().maxStorageBufferBindingSize && w.element_offset <= 0xFFFFFFFFull;
}

// A 1-D launch of `groups` workgroups as a 2-D grid: one dimension holds at most
// maxComputeWorkgroupsPerDimension (65535), so kernels rebuild the flat index as x + y * groups.x.
struct Grid {
  uint32_t x = 1, y = 1;
};

inline Grid grid_for(runtime::DeviceContext& context, uint64_t groups) {
  const uint64_t max_x = context.limits().maxComputeWorkgroupsPerDimension;
  Grid grid;
  grid.x = static_cast<uint32_t>(groups < max_x ? (groups ? groups : 1) : max_x);
  grid.y = static_cast<uint32_t>((groups + grid.x - 1) / grid.x);
  return grid;
}

} // namespace torch_dml::kernels
