// PrivateUse1 hooks: what ATen's Context asks a backend (generators, pointer ownership, pinned memory,
// lazy init, storage resize). Every method whose default throws is implemented.
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <c10/core/StorageImpl.h>

#include "runtime/allocator.h"
#include "runtime/device.h"
#include "runtime/generator.h"
#include "runtime/guard.h"
#include "runtime/host_allocator.h"

namespace torch_dml::runtime {
namespace {

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
