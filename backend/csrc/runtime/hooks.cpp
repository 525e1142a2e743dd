// PrivateUse1 hooks: what ATen's Context asks a backend (generators, pointer ownership, pinned memory,
// lazy init, storage resize). Every method whose default throws is implemented.
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/StorageImpl.h>

#include <mutex>
#include <unordered_set>

#include "runtime/allocator.h"
#include "runtime/device.h"
#include "runtime/generator.h"
#include "runtime/guard.h"

namespace torch_dml::runtime {
namespace {

// WebGPU has no page-locked host memory: "pinned" tensors are ordinary host memory that remembers it
// was asked for, so pin_memory()/is_pinned() and DataLoader(pin_memory=True) behave as users expect.
class HostAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(size_t nbytes) override {
    c10::DataPtr data = c10::GetCPUAllocator()->allocate(nbytes);
    if (data.get()) {
      std::lock_guard<std::mutex> lock(mutex_);
      live_.insert(data.get());
    }
    void* raw = data.get();
    void* context = data.release_context();
    auto* deleter_context = new Owned{context, data.get_deleter(), raw};
    return c10::DataPtr(raw, deleter_context, &HostAllocator::free, c10::Device(c10::DeviceType::CPU));
  }
  c10::DeleterFnPtr raw_deleter() const override { return nullptr; }
  void copy_data(void* dest, const void* src, std::size_t count) const override { default_copy_data(dest, src, count); }

  bool owns(const void* ptr) {
    std::lock_guard<std::mutex> lock(mutex_);
    return live_.count(ptr) != 0;
  }

 private:
  struct Owned {
    void* context;
    c10::DeleterFnPtr deleter;
    void* data;
  };
  static void free(void* context);
  std::mutex mutex_;
  std::unordered_set<const void*> live_;
};

HostAllocator& host_allocator() {
  static HostAllocator allocator;
  return allocator;
}

void HostAllocator::free(void* context) {
  auto* owned = static_cast<Owned*>(context);
  {
    std::lock_guard<std::mutex> lock(host_allocator().mutex_);
    host_allocator().live_.erase(owned->data);
  }
  if (owned->deleter) owned->deleter(owned->context);
  delete owned;
}

struct Hooks final : public at::PrivateUse1HooksInterface {
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return device_count() > 0; }

  const at::Generator& getDefaultGenerator(c10::DeviceIndex device_index) const override {
    return default_generator(device_index < 0 ? current_device_index() : device_index);
  }

  at::Generator getNewGenerator(c10::DeviceIndex device_index) const override {
    return new_generator(device_index < 0 ? current_device_index() : device_index);
  }

  at::Device getDeviceFromPtr(void* data) const override {
    const int device = device_allocator().device_of(data);
    TORCH_CHECK(device >= 0, "torch_dml: pointer ", data, " does not belong to a dml device");
    return at::Device(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(device));
  }

  bool isPinnedPtr(const void* data) const override { return host_allocator().owns(data); }
  c10::Allocator* getPinnedMemoryAllocator() const override { return &host_allocator(); }

  bool hasPrimaryContext(c10::DeviceIndex device_index) const override { return device_initialized(device_index); }

  void init() const override {}

  void resizePrivateUse1Bytes(const c10::Storage& storage, size_t newsize) const override {
    resize_storage_bytes(storage.unsafeGetStorageImpl(), newsize);
  }

  c10::DeviceIndex deviceCount() const override { return static_cast<c10::DeviceIndex>(device_count()); }
  void setCurrentDevice(c10::DeviceIndex device) const override { set_current_device_index(device); }
  c10::DeviceIndex getCurrentDevice() const override { return static_cast<c10::DeviceIndex>(current_device_index()); }
  c10::DeviceIndex exchangeDevice(c10::DeviceIndex device) const override {
    const int previous = current_device_index();
    set_current_device_index(device);
    return static_cast<c10::DeviceIndex>(previous);
  }
  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex device) const override {
    const int previous = current_device_index();
    if (device >= 0 && device < device_count()) set_current_device_index(device);
    return static_cast<c10::DeviceIndex>(previous);
  }
};

[[maybe_unused]] const bool g_registered = [] {
  at::RegisterPrivateUse1HooksInterface(new Hooks()); // owned by ATen for the life of the process
  return true;
}();

} // namespace
} // namespace torch_dml::runtime
