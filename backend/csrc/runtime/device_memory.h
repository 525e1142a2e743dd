// How much memory a dml device has and how much of it is free, as far as anyone can tell. WebGPU has
// no memory query (no heap sizes, no budget), so on the Vulkan backend the same device is asked through
// Vulkan itself (runtime/vulkan_memory.h); elsewhere, or when that fails, the answer is assembled from
// what WebGPU and the OS know. Either way it says where its total and its free came from. D3D12 (DXGI)
// and Metal (recommendedMaxWorkingSetSize) have no query of their own here yet: they take the fallbacks.
#pragma once

#include <cstdint>
#include <optional>

#include "runtime/vulkan_memory.h"

namespace torch_dml::runtime {

struct DeviceMemory {
  uint64_t free = 0;
  uint64_t total = 0;
  // "vulkan": the sum of the device's DEVICE_LOCAL Vulkan heaps (any Vulkan adapter but a CPU one).
  // "host": a CPU adapter (lavapipe, whose Vulkan heap size is nominal), or an integrated one Vulkan
  //         could not answer for, whose buffers live in system memory: the machine's physical
  //         memory, with free also bounded by what the OS reports available.
  // "maxBufferSize": a discrete or unknown adapter Vulkan could not answer for: the largest buffer
  //         the adapter allows, a lower bound on its memory (WebGPU exposes nothing closer).
  const char* total_source = "";
  // "budget": VK_EXT_memory_budget's budget minus usage over the DEVICE_LOCAL heaps, which sees every
  //           process's use of the device, ours included.
  // "reserved": total minus what torch_dml's caching allocator has reserved on the device (other
  //           processes' use is not seen), never negative.
  // Either way, for a CPU or integrated adapter at most what the OS reports available.
  const char* free_source = "";
};

DeviceMemory device_memory(int index);

struct AdapterRecord;
// What Vulkan reports for the adapter, whether or not device_memory uses it (diagnostics and tests).
std::optional<VulkanMemory> vulkan_memory_of(const AdapterRecord& adapter);

} // namespace torch_dml::runtime
