#include "kernels/tensor_slots.h"

#include <algorithm>

#include "kernels/launch.h"

namespace torch_dml::kernels {

uint32_t slots_for(runtime::DeviceContext& context, uint32_t operands, uint32_t shared) {
  const uint32_t bindings = std::min<uint32_t>(Launch::kMaxOperands, context.limits().maxStorageBuffersPerShaderStage);
  return std::clamp<uint32_t>((bindings > shared ? bindings - shared : 0) / operands, 1, kMaxSlots);
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
