#include "runtime/guard.h"

#include <c10/util/Exception.h>
#include <torch/version.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <vector>

#include "runtime/device.h"
#include "runtime/stream.h"

namespace torch_dml::runtime {
namespace {

using c10::Device;
using c10::DeviceIndex;
using c10::DeviceType;
using c10::Stream;

constexpr int kMaxDevices = 64;

thread_local int t_current_device = 0;
// Streams are ids over the device's one queue: work on any of them runs in submission order, which
// is a correct (if serial) implementation of the stream semantics.
thread_local c10::StreamId t_current_stream[kMaxDevices] = {};
std::atomic<c10::StreamId> g_next_stream_id{1};

struct Event {
  int device = -1;
  bool recorded = false;
  bool timed = false;
  std::chrono::steady_clock::time_point when;
};

void check_index(int index) {
  const int count = device_count();
  TORCH_CHECK(index >= 0 && index < count, "Invalid device_id argument supplied ", index,
              ". device_id must be in range [0, ", count, ").");
}

Device resolved(Device device) {
  if (device.index() >= 0) return device;
  return Device(DeviceType::PrivateUse1, static_cast<DeviceIndex>(t_current_device));
}

struct GuardImpl final : public c10::impl::DeviceGuardImplInterface {
  DeviceType type() const override { return DeviceType::PrivateUse1; }

  Device exchangeDevice(Device device) const override {
    Device previous = getDevice();
    if (device.index() != previous.index()) setDevice(device);
    return previous;
  }

  Device getDevice() const override {
    return Device(DeviceType::PrivateUse1, static_cast<DeviceIndex>(t_current_device));
  }

  void setDevice(Device device) const override {
    TORCH_CHECK(device.type() == DeviceType::PrivateUse1, "torch_dml: expected a dml device, got ", device);
    if (device.index() < 0) return;
    check_index(device.index());
    t_current_device = device.index();
  }

  void uncheckedSetDevice(Device device) const noexcept override {
    if (device.index() >= 0) t_current_device = device.index();
  }

  Stream getStream(Device device) const override {
    const int index = device.index() < 0 ? t_current_device : device.index();
    return Stream(Stream::UNSAFE, Device(DeviceType::PrivateUse1, static_cast<DeviceIndex>(index)),
                  t_current_stream[index % kMaxDevices]);
  }

  Stream getDefaultStream(Device device) const override {
    return Stream(Stream::UNSAFE, resolved(device), 0);
  }

  Stream getStreamFromGlobalPool(Device device, bool) const override { return getNewStream(device, 0); }

  Stream getNewStream(Device device, int) const override {
    return Stream(Stream::UNSAFE, resolved(device), g_next_stream_id.fetch_add(1));
  }

  Stream exchangeStream(Stream stream) const override {
    Stream previous = getStream(stream.device());
    t_current_stream[stream.device_index() % kMaxDevices] = stream.id();
    return previous;
  }

  DeviceIndex deviceCount() const noexcept override { return static_cast<DeviceIndex>(device_count()); }

  void record(void** event, const Stream& stream, const DeviceIndex device_index,
              const c10::EventFlag flag) const override {
    TORCH_CHECK(device_index < 0 || device_index == stream.device_index(), "torch_dml: event device ",
                static_cast<int>(device_index), " does not match the stream's device ", stream.device());
    auto* e = static_cast<Event*>(*event);
    if (!e) {
      e = new Event();
      *event = e;
    }
    DeviceContext& context = device_context(stream.device_index());
    std::lock_guard<std::recursive_mutex> lock(context.mutex());
    e->device = stream.device_index();
    e->recorded = true;
    // A timed event waits for the work before it, so its time marks that work's completion. Untimed
    // events only submit what is pending.
    e->timed = flag == c10::EventFlag::BACKEND_DEFAULT;
    if (e->timed) {
      context.stream().synchronize();
      e->when = std::chrono::steady_clock::now();
    } else {
      context.stream().flush();
    }
  }

  void block(void*, const Stream&) const override {
    // One queue per device: everything recorded later already runs after the event's work.
  }

  bool queryEvent(void* event) const override {
    auto* e = static_cast<Event*>(event);
    if (!e || !e->recorded) return true;
    DeviceContext& context = device_context(e->device);
    std::lock_guard<std::recursive_mutex> lock(context.mutex());
    return context.stream().query();
  }

  void synchronizeEvent(void* event) const override {
    auto* e = static_cast<Event*>(event);
    if (!e || !e->recorded) return;
    synchronizeDevice(static_cast<DeviceIndex>(e->device));
  }

  double elapsedTime(void* start, void* end, const DeviceIndex) const override {
    auto* a = static_cast<Event*>(start);
    auto* b = static_cast<Event*>(end);
    TORCH_CHECK(a && b && a->recorded && b->recorded,
                "torch_dml: both events must be recorded before calling elapsed_time");
    TORCH_CHECK(a->timed && b->timed, "torch_dml: both events must be created with enable_timing=True");
    return std::chrono::duration<double, std::milli>(b->when - a->when).count();
  }

  void destroyEvent(void* event, const DeviceIndex) const noexcept override { delete static_cast<Event*>(event); }

  bool queryStream(const Stream& stream) const override {
    DeviceContext& context = device_context(stream.device_index());
    std::lock_guard<std::recursive_mutex> lock(context.mutex());
    return context.stream().query();
  }

  void synchronizeStream(const Stream& stream) const override { synchronizeDevice(stream.device_index()); }

  void synchronizeDevice(const DeviceIndex device_index) const override {
    const int index = device_index < 0 ? t_current_device : device_index;
    if (!device_initialized(index)) return;
    DeviceContext& context = device_context(index);
    std::lock_guard<std::recursive_mutex> lock(context.mutex());
    context.stream().synchronize();
  }

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 12)
  bool isStreamCapturing(const Stream&) const override { return false; }
#endif

  c10::DeviceCapability getDeviceCapability(Device device) const override {
    c10::DeviceCapability capability;
    capability.capability_data.capability_bits = 0;
    auto& types = capability.capability_data.supported_scalar_types;
    types.has_Float = types.has_Half = types.has_BFloat16 = true;
    types.has_Long = types.has_Int = types.has_Short = types.has_Char = types.has_Byte = types.has_Bool = true;
    const int index = device.index() < 0 ? t_current_device : device.index();
    types.has_Double = device_context(index).has(Feature::ShaderF64);
    return capability;
  }
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, GuardImpl);

} // namespace

int current_device_index() noexcept {
  return t_current_device;
}

void set_current_device_index(int index) {
  check_index(index);
  t_current_device = index;
}

} // namespace torch_dml::runtime
