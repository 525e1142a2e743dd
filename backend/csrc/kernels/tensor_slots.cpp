#include "kernels/tensor_slots.h"

#include <algorithm>
#include <cstdlib>

#include "kernels/launch.h"

namespace torch_dml::kernels {

namespace {

// TORCH_DML_TENSOR_SLOTS=n: at most n slots a launch, on any adapter (tests run the many-slot kernels
// on lavapipe with it); read per launch, so a test may set it.
const char* forced_slots() {
  return std::getenv("TORCH_DML_TENSOR_SLOTS");
}

} // namespace

bool many_slots_pay(runtime::DeviceContext& context) {
  // A software adapter (lavapipe) runs every case of the slot switch for every thread, masked, so each
  // slot costs every element a load: a foreach mul_ over 60 tensors of 64Ki floats took 3x the
  // per-tensor loop's time with 4 slots, 40x with 32, and 1.7x with one (the loop's kernels load four
  // elements at once). A GPU branches on the uniform slot.
  return context.adapter().adapter_type != "cpu" || forced_slots() != nullptr;
}

uint32_t slots_for(runtime::DeviceContext& context, uint32_t operands, uint32_t shared) {
  const uint32_t bindings = std::min<uint32_t>(Launch::kMaxOperands, context.limits().maxStorageBuffersPerShaderStage);
  uint32_t cap = many_slots_pay(context) ? kMaxSlots : 1;
  if (const char* forced = forced_slots()) cap = static_cast<uint32_t>(std::max(1, std::atoi(forced)));
  return std::clamp<uint32_t>((bindings > shared ? bindings - shared : 0) / operands, 1, cap);
}

std::string slot_bindings(uint32_t slots, std::span<const char* const> names) {
  std::string text;
  for (uint32_t s = 0; s < slots; ++s)
    for (size_t k = 0; k < names.size(); ++k)
      text += "@group(0) @binding(" + std::to_string(s * names.size() + k) + ") var<storage, read_write> slot" +
          std::to_string(s) + "_" + names[k] + ": array<u32>;\n";
  return text;
}

std::string slot_accessors(uint32_t slots, std::span<const char* const> names) {
  std::string text;
  for (const char* name : names) {
    std::string load = std::string("fn load_") + name + "(slot: u32, i: u32) -> u32 {\n  switch slot {\n";
    std::string store = std::string("fn store_") + name + "(slot: u32, i: u32, v: u32) {\n  switch slot {\n";
    for (uint32_t s = 0; s < slots; ++s) {
      const std::string label = s + 1 == slots ? "    default: " : "    case " + std::to_string(s) + "u: ";
      const std::string array = "slot" + std::to_string(s) + "_" + name;
      load += label + "{ return " + array + "[i]; }\n";
      store += label + "{ " + array + "[i] = v; }\n";
    }
    text += load + "  }\n}\n\n" + store + "  }\n}\n\n";
  }
  return text;
}

} // namespace torch_dml::kernels
