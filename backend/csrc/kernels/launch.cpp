#include "kernels/launch.h"

#include <c10/util/Exception.h>

#include "kernels/pipeline_cache.h"

namespace torch_dml::kernels {

Launch::Launch(runtime::DeviceContext& context, std::string_view op, c10::ScalarType dtype)
    : context_(context), op_(op), dtype_(dtype) {}

namespace {

// The part of a buffer a dispatch binds for one operand. Bindings stop at maxStorageBufferBindingSize
// (128 MiB on lavapipe, 2 GiB on NVIDIA), so an operand is bound from just below its first element to
// just past its last, and element indices in kernels are relative to that window (they stay 32-bit).
struct Window {
  uint64_t offset = 0;         // bytes, a multiple of minStorageBufferOffsetAlignment
  uint64_t size = 0;           // bytes, a multiple of 4
  uint64_t element_offset = 0; // the operand's first element, relative to the window
};

Window window_of(runtime::DeviceContext& context, const DeviceTensorRef& t, uint64_t count, uint64_t itemsize) {
  if (!itemsize) itemsize = c10::elementSize(t.dtype);
  const uint64_t first = t.element_offset, last = first + (count ? count - 1 : 0);
  const uint64_t alignment = context.limits().minStorageBufferOffsetAlignment;
  Window w;
  w.offset = first * itemsize / alignment * alignment;
  const uint64_t end = ((last + 1) * itemsize + 3) / 4 * 4;
  w.size = (end < t.buffer_size ? end : t.buffer_size) - w.offset;
  if (w.size < 4) w.size = 4;
  w.element_offset = first - w.offset / itemsize;
  return w;
}

bool window_fits(runtime::DeviceContext& context, const Window& w, uint64_t count) {
  return w.size <= context.limits().maxStorageBufferBindingSize &&
      (count ? count - 1 : 0) + w.element_offset <= 0xFFFFFFFFull;
}

} // namespace

bool fits_one_binding(runtime::DeviceContext& context, const DeviceTensorRef& t, uint64_t count, uint64_t itemsize) {
  return window_fits(context, window_of(context, t, count, itemsize), count);
}

uint32_t Launch::bind(const DeviceTensorRef& t, uint64_t count, uint64_t itemsize) {
  TORCH_CHECK(count_ < kMaxOperands, "torch_dml: ", op_, " binds more than ", kMaxOperands, " operands");
  const Window w = window_of(context_, t, count, itemsize);
  if (!window_fits(context_, w, count))
    require(false, "operand " + std::to_string(count_) + " is larger than one storage binding (" +
                       std::to_string(context_.limits().maxStorageBufferBindingSize >> 20) + " MiB here)");
  bindings_[count_++] = {t.buffer, w.offset, w.size};
  return static_cast<uint32_t>(w.element_offset);
}

void Launch::bind_buffer(const runtime::StorageBinding& range) {
  TORCH_CHECK(count_ < kMaxOperands, "torch_dml: ", op_, " binds more than ", kMaxOperands, " operands");
  bindings_[count_++] = range;
}

void Launch::require(bool ok, std::string_view why) {
  if (!ok && reason_.empty()) reason_ = why;
}

void Launch::require_u32(uint64_t count, std::string_view what) {
  if (count > 0xFFFFFFFFull && reason_.empty()) reason_ = "more than 2^32 " + std::string(what);
}

void Launch::check() const {
  TORCH_CHECK(ok(), "torch_dml: ", op_, " of ", dtype_, " cannot run on ", context_.describe(), ": ", reason_);
}

void Launch::record(WGPUComputePipeline compiled, const void* params, size_t params_size, uint64_t groups) {
  // One dimension holds at most maxComputeWorkgroupsPerDimension (65535): the flat count goes out as a
  // 2-D grid, and kernels rebuild the flat index as x + y * groups.x (lib/grid.wgsl).
  const uint64_t max_x = context_.limits().maxComputeWorkgroupsPerDimension;
  const uint32_t x = static_cast<uint32_t>(groups < max_x ? groups : max_x);
  const uint32_t y = static_cast<uint32_t>((groups + x - 1) / x);
  context_.stream().dispatch(compiled, count_, bindings_, params, params_size, x, y);
}

void Launch::dispatch(const std::string& kernel, const std::function<std::string()>& make_source, const void* params,
                      size_t params_size, uint64_t groups, const char* entry) {
  check();
  if (groups == 0) return;
  record(pipeline(context_, kernel, count_, make_source, entry), params, params_size, groups);
}

void Launch::dispatch3d(const std::string& kernel, const std::function<std::string()>& make_source, const void* params,
                        size_t params_size, uint32_t groups_x, uint32_t groups_y, uint32_t groups_z,
                        const char* entry) {
  check();
  if (groups_x == 0 || groups_y == 0 || groups_z == 0) return;
  WGPUComputePipeline compiled = pipeline(context_, kernel, count_, make_source, entry);
  context_.stream().dispatch(compiled, count_, bindings_, params, params_size, groups_x, groups_y, groups_z);
}

} // namespace torch_dml::kernels
