// One object of a kind per device index, made on first use and never freed: devices live as long as
// the process, and what such an object holds (WebGPU buffers) must outlive static destruction order.
// Found without a global lock, since transfers look it up on every `.item()` and upload.
#pragma once

#include <c10/util/Exception.h>

#include <array>
#include <atomic>
#include <mutex>

namespace torch_dml::runtime {

template <typename T>
T& per_device(int device) {
  constexpr int kMaxDevices = 64;
  TORCH_CHECK(device >= 0 && device < kMaxDevices, "torch_dml: device index ", device, " beyond ", kMaxDevices);
  static std::array<std::atomic<T*>, kMaxDevices> all;
  T* object = all[device].load(std::memory_order_acquire);
  if (object) return *object;
  static std::mutex guard;
  std::lock_guard<std::mutex> lock(guard);
  object = all[device].load(std::memory_order_relaxed);
  if (!object) {
    object = new T(); // never freed, see above
    all[device].store(object, std::memory_order_release);
  }
  return *object;
}

} // namespace torch_dml::runtime
