#include "runtime/generator.h"

#include <ATen/Utils.h>
#include <c10/core/TensorImpl.h>
#include <c10/util/Exception.h>

#include <cstring>
#include <mutex>
#include <random>
#include <vector>

#include "runtime/device.h"

namespace torch_dml::runtime {
namespace {

constexpr size_t kStateBytes = 2 * sizeof(uint64_t); // seed, offset

} // namespace

PhiloxGenerator::PhiloxGenerator(c10::DeviceIndex device, uint64_t seed)
    : c10::GeneratorImpl(c10::Device(c10::DeviceType::PrivateUse1, device),
                         c10::DispatchKeySet(c10::DispatchKey::PrivateUse1)),
      seed_(seed) {}

void PhiloxGenerator::set_current_seed(uint64_t seed) {
  seed_ = seed;
  offset_ = 0;
}

uint64_t PhiloxGenerator::seed() {
  const uint64_t fresh = c10::detail::getNonDeterministicRandom(true);
  set_current_seed(fresh);
  return fresh;
}

void PhiloxGenerator::set_state(const c10::TensorImpl& new_state) {
  TORCH_CHECK(new_state.dtype() == caffe2::TypeMeta::Make<uint8_t>() && new_state.numel() == kStateBytes &&
                  new_state.device().is_cpu(),
              "torch_dml: a dml RNG state is a CPU uint8 tensor of ", kStateBytes, " bytes (seed, offset)");
  uint64_t values[2];
  std::memcpy(values, new_state.data(), kStateBytes);
  seed_ = values[0];
  offset_ = values[1];
}

c10::intrusive_ptr<c10::TensorImpl> PhiloxGenerator::get_state() const {
  auto state = at::detail::empty_cpu({static_cast<int64_t>(kStateBytes)}, at::kByte, std::nullopt, std::nullopt,
                                     std::nullopt, std::nullopt);
  const uint64_t values[2] = {seed_, offset_};
  std::memcpy(state.data_ptr(), values, kStateBytes);
  return state.getIntrusivePtr();
}

uint64_t PhiloxGenerator::advance(uint64_t increment) {
  const uint64_t first = offset_;
  offset_ += increment;
  return first;
}

PhiloxGenerator* PhiloxGenerator::clone_impl() const {
  auto* copy = new PhiloxGenerator(device().index(), seed_);
  copy->offset_ = offset_;
  return copy;
}

const at::Generator& default_generator(int device) {
  static std::mutex mutex;
  // Leaked: generators are referenced by Python objects that may outlive static destruction.
  static auto* generators = new std::vector<at::Generator>();
  const int count = device_count();
  TORCH_CHECK(device >= 0 && device < count, "Invalid device_id argument supplied ", device,
              ". device_id must be in range [0, ", count, ").");
  std::lock_guard<std::mutex> lock(mutex);
  if (generators->empty()) {
    for (int i = 0; i < count; ++i)
      generators->push_back(at::make_generator<PhiloxGenerator>(static_cast<c10::DeviceIndex>(i)));
  }
  return (*generators)[device];
}

at::Generator new_generator(int device) {
  return at::make_generator<PhiloxGenerator>(static_cast<c10::DeviceIndex>(device));
}

} // namespace torch_dml::runtime
