// Multi-tensor launches (the foreach ops, the fused optimizers): several tensors per dispatch, each a
// slot with its own bindings (every dml storage is a buffer of its own), as many slots as the
// adapter's maxStorageBuffersPerShaderStage allows. WGSL side: lib/tensor_slots.wgsl.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "runtime/device.h"

namespace torch_dml::kernels {

// Rows of the slot tables of the multi-tensor families' Params.
constexpr uint32_t kMaxSlots = 32;

// Slots of `operands` bindings each that one launch takes beside `shared` other bindings: 1 on a
// software adapter, TORCH_DML_TENSOR_SLOTS at most where set.
uint32_t slots_for(runtime::DeviceContext& context, uint32_t operands, uint32_t shared = 0);

// Whether launches of several tensors beat a launch per tensor here: not on a software adapter, unless
// TORCH_DML_TENSOR_SLOTS asks for them.
bool many_slots_pay(runtime::DeviceContext& context);

// Declarations of `slot<s>_<name>` (array<u32>) for every slot and operand, at bindings
// s * names.size() + k, and load_<name>(slot, i) / store_<name>(slot, i, v) switching on the slot.
std::string slot_bindings(uint32_t slots, std::span<const char* const> names);
std::string slot_accessors(uint32_t slots, std::span<const char* const> names);

} // namespace torch_dml::kernels
