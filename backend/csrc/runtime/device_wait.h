// Waiting for the device. A blocking wgpuDevicePoll sleeps in the kernel and wakes tens of microseconds
// after the GPU finished: on the H200 (2026-11-27) a one-op round trip cost ~100 us against CUDA's
// ~22 us, and CUDA spins by default. So on a GPU a wait first polls without blocking for up to
// DeviceContext::spin_wait_us(); on a CPU adapter (lavapipe) it blocks at once, since spinning would take a core from
// the driver threads that run the work. TORCH_DML_SPIN_WAIT_US overrides the window (0: never spin).
#pragma once

#include <chrono>
#include <cstdint>
#include <thread>

#include "runtime/device.h"
#include "webgpu/procs.h"

namespace torch_dml::runtime {

// A non-blocking poll that runs completed work's callbacks; true when nothing is in flight.
inline bool poll_once(DeviceContext& context) {
  // wgpuDevicePoll is declared WGPUBool but returns a one-byte bool: only the low byte is meaningful.
  return (webgpu::wgpu().DevicePoll(context.device(), false, nullptr) & 0xFF) != 0;
}

// Returns once submission `index` is done or `done()` holds.
template <typename Done>
void wait_for(DeviceContext& context, const WGPUSubmissionIndex* index, Done&& done) {
  if (const int64_t spin = context.spin_wait_us(); spin > 0) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(spin);
    do {
      const bool idle = poll_once(context);
      if (done()) return;
      if (idle) break; // the blocking poll below then returns at once, finishing what completion left
      std::this_thread::yield();
    } while (std::chrono::steady_clock::now() < deadline);
  }
  webgpu::wgpu().DevicePoll(context.device(), true, index);
}

} // namespace torch_dml::runtime
