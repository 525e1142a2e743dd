#include "runtime/device.h"

#include <c10/util/Exception.h>

#include <atomic>
#include <cstdlib>
#include <sstream>

#include "runtime/stream.h"

namespace torch_dml::runtime {
namespace {

using webgpu::wgpu;

void uncaptured_error(WGPUDevice const*, WGPUErrorType type, WGPUStringView message, void* userdata1, void*) {
  static_cast<DeviceContext*>(userdata1)->on_uncaptured_error(type, webgpu::to_string(message));
}

void device_lost(WGPUDevice const*, WGPUDeviceLostReason reason, WGPUStringView message, void* userdata1, void*) {
  // Destroying the device at exit is not a loss worth reporting.
  if (reason == WGPUDeviceLostReason_Destroyed || reason == WGPUDeviceLostReason_CallbackCancelled) return;
  static_cast<DeviceContext*>(userdata1)->on_lost(webgpu::to_string(message));
}

struct DeviceRequest {
  WGPUDevice device = nullptr;
  std::string message;
};

void on_device(WGPURequestDeviceStatus status, WGPUDevice device, WGPUStringView message, void* userdata1, void*) {
  auto* request = static_cast<DeviceRequest*>(userdata1);
  if (status == WGPURequestDeviceStatus_Success) request->device = device;
  request->message = webgpu::to_string(message);
}

std::mutex& contexts_mutex() {
  static std::mutex mutex;
  return mutex;
}

std::vector<std::unique_ptr<DeviceContext>>& contexts() {
  // Deliberately leaked: tensors freed during interpreter teardown still return memory to their device.
  static auto* all = new std::vector<std::unique_ptr<DeviceContext>>();
  return *all;
}

// The created contexts again, read without the lock: every allocation and op asks for its device's
// context (several times per `.item()`), and a context, once made, lives as long as the process.
constexpr int kMaxFastContexts = 64;
std::atomic<DeviceContext*> created_contexts[kMaxFastContexts];

// 200 us: longer than a small kernel plus its submission, short enough to cost little CPU when a
// training step takes milliseconds and the wait ends up blocking anyway.
constexpr int64_t kGpuSpinUs = 200;

int64_t spin_wait_from_env(const AdapterRecord& adapter) {
  if (const char* value = std::getenv("TORCH_DML_SPIN_WAIT_US")) {
    char* end = nullptr;
    const long long parsed = std::strtoll(value, &end, 10);
    TORCH_CHECK(end != value && *end == '\0' && parsed >= 0, "torch_dml: TORCH_DML_SPIN_WAIT_US must be a ",
                "whole number of microseconds (0 turns spinning off), not '", value, "'");
    return parsed;
  }
  return adapter.adapter_type == "cpu" ? 0 : kGpuSpinUs;
}

} // namespace

DeviceContext::DeviceContext(int index, AdapterRecord& adapter)
    : index_(index), adapter_(adapter), spin_wait_us_(spin_wait_from_env(adapter)) {
  WGPUAdapter raw = adapter.adapter.get();
  WGPULimits adapter_limits = WGPU_LIMITS_INIT;
  wgpu().AdapterGetLimits(raw, &adapter_limits);

  // TORCH_DML_DISABLE_FEATURES=shader-f64,... hides features, to see how an adapter without them behaves.
  const char* disabled_env = std::getenv("TORCH_DML_DISABLE_FEATURES");
  const std::string disabled = disabled_env ? "," + std::string(disabled_env) + "," : "";
  std::vector<WGPUFeatureName> required;
  for (size_t i = 0; i < std::size(kWantedFeatures); ++i) {
    const std::string name(kWantedFeatures[i].name);
    if (disabled.find("," + name + ",") != std::string::npos) continue;
    if (wgpu().AdapterHasFeature(raw, kWantedFeatures[i].id)) {
      required.push_back(kWantedFeatures[i].id);
      features_.set(i);
    }
  }
  // f64 is only sound through Vulkan in wgpu-native 29 (wgpu.h); elsewhere the adapter may claim it.
  if (adapter.backend != "Vulkan") features_.reset(static_cast<size_t>(Feature::ShaderF64));

  WGPUDeviceDescriptor descriptor = WGPU_DEVICE_DESCRIPTOR_INIT;
  std::string label = "torch_dml device " + std::to_string(index);
  descriptor.label = webgpu::view(label.c_str());
  descriptor.requiredFeatureCount = required.size();
  descriptor.requiredFeatures = required.data();
  // Without this the device gets WebGPU's small defaults (128 MiB bindings, 256 invocations...).
  descriptor.requiredLimits = &adapter_limits;
  descriptor.uncapturedErrorCallbackInfo.callback = uncaptured_error;
  descriptor.uncapturedErrorCallbackInfo.userdata1 = this;
  descriptor.deviceLostCallbackInfo.mode = WGPUCallbackMode_AllowSpontaneous;
  descriptor.deviceLostCallbackInfo.callback = device_lost;
  descriptor.deviceLostCallbackInfo.userdata1 = this;

  DeviceRequest request;
  WGPURequestDeviceCallbackInfo callback = WGPU_REQUEST_DEVICE_CALLBACK_INFO_INIT;
  callback.mode = WGPUCallbackMode_AllowProcessEvents;
  callback.callback = on_device;
  callback.userdata1 = &request;
  wgpu().AdapterRequestDevice(raw, &descriptor, callback);
  wgpu().InstanceProcessEvents(AdapterRegistry::get().instance());
  TORCH_CHECK(request.device, "torch_dml: could not create a WebGPU device on adapter '", adapter.name, "' (",
              adapter.backend, "): ", request.message);
  device_ = webgpu::Device(request.device);
  queue_ = webgpu::Queue(wgpu().DeviceGetQueue(device_.get()));
  wgpu().DeviceGetLimits(device_.get(), &limits_);
  stream_ = std::make_unique<CommandStream>(*this);
}

DeviceContext::~DeviceContext() = default;

std::vector<std::string> DeviceContext::feature_names() const {
  std::vector<std::string> names;
  for (size_t i = 0; i < std::size(kWantedFeatures); ++i)
    if (features_.test(i)) names.emplace_back(kWantedFeatures[i].name);
  return names;
}

std::string DeviceContext::describe() const {
  std::ostringstream text;
  text << "adapter '" << adapter_.name << "' (" << adapter_.backend << ", dml:" << index_ << ")";
  return text.str();
}

void DeviceContext::on_uncaptured_error(WGPUErrorType type, const std::string& message) {
  // Keep the first error: later ones are usually consequences of it.
  if (pending_error_.empty()) {
    pending_error_ = message;
    pending_type_ = type;
  }
}

void DeviceContext::on_lost(const std::string& message) {
  lost_ = true;
  lost_message_ = message;
}

void DeviceContext::check_alive(const std::string& what) const {
  TORCH_CHECK(!lost_, "torch_dml: ", what, ": the WebGPU device was lost on ", describe(), ": ", lost_message_,
              ". Restart the process to use this device again.");
}

webgpu::Buffer DeviceContext::create_buffer(uint64_t size, WGPUBufferUsage usage, const char* label,
                                            bool mapped_at_creation) {
  WGPUBufferDescriptor descriptor = WGPU_BUFFER_DESCRIPTOR_INIT;
  descriptor.label = webgpu::view(label);
  descriptor.size = size;
  descriptor.usage = usage;
  descriptor.mappedAtCreation = mapped_at_creation;
  webgpu::Buffer buffer(wgpu().DeviceCreateBuffer(device(), &descriptor));
  check(std::string("creating the buffer '") + label + "'");
  return buffer;
}

void DeviceContext::check(const std::string& what) {
  check_alive(what);
  if (pending_error_.empty()) return;
  std::string message = std::move(pending_error_);
  const WGPUErrorType type = pending_type_;
  pending_error_.clear();
  pending_type_ = WGPUErrorType_NoError;
  if (type == WGPUErrorType_OutOfMemory)
    TORCH_CHECK_WITH(OutOfMemoryError, false, "torch_dml: ", what, ": out of memory on ", describe(), ": ", message);
  TORCH_CHECK(false, "torch_dml: ", what, ": WebGPU error on ", describe(), ": ", message);
}

int device_count() noexcept {
  try {
    if (!webgpu::loaded()) return 0;
    return static_cast<int>(AdapterRegistry::get().adapters().size());
  } catch (...) {
    return 0;
  }
}

DeviceContext& device_context(int index) {
  if (index >= 0 && index < kMaxFastContexts) {
    if (DeviceContext* created = created_contexts[index].load(std::memory_order_acquire)) return *created;
  }
  const int count = device_count();
  TORCH_CHECK(index >= 0 && index < count, "Invalid device_id argument supplied ", index,
              ". device_id must be in range [0, ", count, ").",
              count == 0 ? " No WebGPU adapter was found: " + AdapterRegistry::get().enumeration_error() : "");
  std::lock_guard<std::mutex> lock(contexts_mutex());
  auto& all = contexts();
  if (all.size() < static_cast<size_t>(count)) all.resize(count);
  if (!all[index]) all[index] = std::make_unique<DeviceContext>(index, AdapterRegistry::get().adapters()[index]);
  if (index < kMaxFastContexts) created_contexts[index].store(all[index].get(), std::memory_order_release);
  return *all[index];
}

bool device_initialized(int index) noexcept {
  std::lock_guard<std::mutex> lock(contexts_mutex());
  auto& all = contexts();
  return index >= 0 && static_cast<size_t>(index) < all.size() && all[index] != nullptr;
}

const AdapterRecord& adapter_record(int index) {
  const int count = device_count();
  TORCH_CHECK(index >= 0 && index < count, "Invalid device_id argument supplied ", index,
              ". device_id must be in range [0, ", count, ").");
  return AdapterRegistry::get().adapters()[index];
}

} // namespace torch_dml::runtime
