#include "runtime/device_wait.h"

#include <c10/util/Exception.h>

#include <cstdlib>
#include <mutex>
#include <unordered_map>

#include "runtime/device.h"
#include "webgpu/procs.h"

namespace torch_dml::runtime {
namespace {

// 200 us: longer than a small kernel plus its submission, short enough to cost little CPU when a
// training step takes milliseconds and the wait ends up blocking anyway.
constexpr int64_t kGpuSpinUs = 200;

int64_t spin_from_env(const DeviceContext& context) {
  if (const char* value = std::getenv("TORCH_DML_SPIN_WAIT_US")) {
    char* end = nullptr;
    const long long parsed = std::strtoll(value, &end, 10);
    TORCH_CHECK(end != value && *end == '\0' && parsed >= 0, "torch_dml: TORCH_DML_SPIN_WAIT_US must be a ",
                "whole number of microseconds (0 turns spinning off), not '", value, "'");
    return parsed;
  }
  return context.adapter().adapter_type == "cpu" ? 0 : kGpuSpinUs;
}

} // namespace

int64_t spin_wait_us(const DeviceContext& context) {
  static std::mutex mutex;
  static std::unordered_map<const DeviceContext*, int64_t> known;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = known.find(&context);
  if (it == known.end()) it = known.emplace(&context, spin_from_env(context)).first;
  return it->second;
}

bool poll_once(DeviceContext& context) {
  // wgpuDevicePoll is declared WGPUBool but returns a one-byte bool: only the low byte is meaningful.
  return (webgpu::wgpu().DevicePoll(context.device(), false, nullptr) & 0xFF) != 0;
}

void block_until(DeviceContext& context, const WGPUSubmissionIndex* index) {
  webgpu::wgpu().DevicePoll(context.device(), true, index);
}

} // namespace torch_dml::runtime
