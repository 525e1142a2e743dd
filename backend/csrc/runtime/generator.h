// The dml random generator: Philox 4x32-10 state as (seed, offset), like CUDA's, so a stream of
// random numbers is addressed by counter and kernels can draw in parallel. Ops that are not native yet
// draw through the CPU fallback from a CPU generator derived from (seed, offset), so dml's RNG is
// reproducible under torch.dml.manual_seed either way.
#pragma once

#include <ATen/core/Generator.h>
#include <c10/core/GeneratorImpl.h>

namespace torch_dml::runtime {

class PhiloxGenerator final : public c10::GeneratorImpl {
 public:
  explicit PhiloxGenerator(c10::DeviceIndex device, uint64_t seed = c10::default_rng_seed_val);

  void set_current_seed(uint64_t seed) override;
  uint64_t current_seed() const override { return seed_; }
  uint64_t seed() override;
  void set_offset(uint64_t offset) override { offset_ = offset; }
  uint64_t get_offset() const override { return offset_; }
  void set_state(const c10::TensorImpl& new_state) override;
  c10::intrusive_ptr<c10::TensorImpl> get_state() const override;

  // Reserves `increment` counter values and returns the offset of the first (caller holds mutex_).
  uint64_t advance(uint64_t increment);

  static c10::DeviceType device_type() { return c10::DeviceType::PrivateUse1; }

 private:
  PhiloxGenerator* clone_impl() const override;
  uint64_t seed_;
  uint64_t offset_ = 0;
};

const at::Generator& default_generator(int device);
at::Generator new_generator(int device);

} // namespace torch_dml::runtime
