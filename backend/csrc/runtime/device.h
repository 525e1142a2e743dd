// One WebGPU device per dml device index: the adapter's own limits, the features torch_dml uses, the
// error and device-lost callbacks, and the lock that serialises everything recorded on the device.
#pragma once

#include <bitset>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/adapters.h"
#include "runtime/features.h"

namespace torch_dml::runtime {

class CommandStream;

class DeviceContext {
 public:
  DeviceContext(int index, AdapterRecord& adapter);
  ~DeviceContext();
  DeviceContext(const DeviceContext&) = delete;
  DeviceContext& operator=(const DeviceContext&) = delete;

  int index() const { return index_; }
  const AdapterRecord& adapter() const { return adapter_; }
  WGPUDevice device() const { return device_.get(); }
  WGPUQueue queue() const { return queue_.get(); }
  const WGPULimits& limits() const { return limits_; }
  bool has(Feature feature) const { return features_.test(static_cast<size_t>(feature)); }
  std::vector<std::string> feature_names() const;

  // "adapter 'llvmpipe (LLVM 15.0.6, 256 bits)' (Vulkan, dml:0)": the phrase every error ends with.
  std::string describe() const;

  // Everything that records into, submits to or reads from this device holds this lock.
  std::recursive_mutex& mutex() { return mutex_; }
  CommandStream& stream() { return *stream_; }

  // Throws (naming `what`) if the device was lost or an uncaptured WebGPU error is pending. The
  // error is consumed, so the next operation starts clean.
  void check(const std::string& what);
  void check_alive(const std::string& what) const;
  // The per-dispatch form: no string is built unless there is something to report.
  void check(const char* what) {
    if (lost_ || !pending_error_.empty()) check(std::string(what));
  }

  // A buffer of `size` bytes for `usage`, labelled `label`; a failed creation throws, naming the label.
  webgpu::Buffer create_buffer(uint64_t size, WGPUBufferUsage usage, const char* label,
                               bool mapped_at_creation = false);

  // How long a wait for this device polls before it blocks (runtime/device_wait.h).
  int64_t spin_wait_us() const { return spin_wait_us_; }

  // Callback plumbing (called from wgpu-native, inside the failing call).
  void on_uncaptured_error(WGPUErrorType type, const std::string& message);
  void on_lost(const std::string& message);

 private:
  int index_;
  AdapterRecord& adapter_;
  webgpu::Device device_;
  webgpu::Queue queue_;
  WGPULimits limits_ = WGPU_LIMITS_INIT;
  std::bitset<32> features_;
  std::recursive_mutex mutex_;
  std::unique_ptr<CommandStream> stream_;
  std::string pending_error_;
  WGPUErrorType pending_type_ = WGPUErrorType_NoError;
  bool lost_ = false;
  std::string lost_message_;
  int64_t spin_wait_us_ = 0;
};

// Number of dml devices; never throws (0 when no adapter or no library).
int device_count() noexcept;

// The device for an index, created on first use. Throws for an invalid index, naming the range.
DeviceContext& device_context(int index);

// Whether device_context(index) has already created the device (no creation as a side effect).
bool device_initialized(int index) noexcept;

const AdapterRecord& adapter_record(int index);

} // namespace torch_dml::runtime
