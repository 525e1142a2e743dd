// A dml adapter's memory as its Vulkan driver reports it: WebGPU has no memory query, but on the
// Vulkan backend the same physical device is visible to Vulkan itself. The loader is opened at run
// time, never linked, so a machine without it (or a Metal/D3D12 build) loses nothing but this answer.
// D3D12 (DXGI's QueryVideoMemoryInfo) and Metal (recommendedMaxWorkingSetSize) are not asked here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace torch_dml::runtime {

struct VulkanMemory {
  uint64_t total = 0; // the sum of the device's DEVICE_LOCAL heaps
  // With VK_EXT_memory_budget: the sum over those heaps of budget minus usage, which counts every
  // process's and API's use of the device, ours included. Empty without the extension.
  std::optional<uint64_t> free;
};

// The Vulkan physical device whose vendor and device IDs (and, when several share them, name) are
// those wgpu reported for the adapter. Empty when there is no loader, no instance, no such device or
// any call fails; never throws, aborts or prints. The instance is created once per process and kept
// for the budget queries, which are cheap. TORCH_DML_VULKAN_LOADER names another loader library to
// open (tests use it to stand in for a machine without one).
std::optional<VulkanMemory> vulkan_memory(uint32_t vendor_id, uint32_t device_id, const std::string& name);

} // namespace torch_dml::runtime
