#include "runtime/device_memory.h"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <optional>
#include <string>

#include "runtime/allocator.h"
#include "runtime/adapters.h"
#include "runtime/device.h"
#include "runtime/vulkan_memory.h"

#ifdef _WIN32
#ifndef NOMINMAX
#define NOMINMAX // windows.h's min/max macros break std::min
#endif
#include <windows.h>
#else
#include <unistd.h>
#endif

namespace torch_dml::runtime {
namespace {

struct HostMemory {
  uint64_t total = 0;
  uint64_t available = 0;
};

HostMemory host_memory() {
  HostMemory host;
#ifdef _WIN32
  MEMORYSTATUSEX status{};
  status.dwLength = sizeof(status);
  if (GlobalMemoryStatusEx(&status)) {
    host.total = status.ullTotalPhys;
    host.available = status.ullAvailPhys;
  }
#else
  const long page = sysconf(_SC_PAGESIZE);
  const long pages = sysconf(_SC_PHYS_PAGES);
  if (page > 0 && pages > 0) host.total = static_cast<uint64_t>(page) * static_cast<uint64_t>(pages);
#ifdef __linux__
  // MemAvailable counts reclaimable page cache, which MemFree (_SC_AVPHYS_PAGES) leaves out: on a busy
  // machine MemFree is a small fraction of what an allocation can really get.
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  while (meminfo >> key >> kib) {
    if (key == "MemAvailable:") {
      host.available = kib * 1024;
      break;
    }
    meminfo.ignore(64, '\n');
  }
#endif
#ifdef _SC_AVPHYS_PAGES
  const long free_pages = sysconf(_SC_AVPHYS_PAGES);
  if (host.available == 0 && page > 0 && free_pages > 0)
    host.available = static_cast<uint64_t>(page) * static_cast<uint64_t>(free_pages);
#endif
  if (host.available == 0) host.available = host.total; // macOS: no free-memory count in sysconf
#endif
  return host;
}

} // namespace

std::optional<VulkanMemory> vulkan_memory_of(const AdapterRecord& adapter) {
  // wgpu reports Vulkan's own vendorID/deviceID for a Vulkan adapter; other backends' IDs are not
  // guaranteed to name the device Vulkan would.
  if (adapter.backend != "Vulkan") return std::nullopt;
  return vulkan_memory(adapter.vendor_id, adapter.device_id, adapter.name);
}

DeviceMemory device_memory(int index) {
  DeviceContext& context = device_context(index);
  const AdapterRecord& adapter = context.adapter();
  const bool shares_host_memory = adapter.adapter_type == "cpu" || adapter.adapter_type == "integrated";
  DeviceMemory memory;
  uint64_t ceiling = UINT64_MAX;
  const HostMemory host = shares_host_memory ? host_memory() : HostMemory{};
  if (host.total > 0) ceiling = host.available;
  // A software adapter's (lavapipe's) Vulkan heap is host memory under a nominal size (Mesa 22.3
  // reports a fixed 2 GiB and does not hold allocations to it), so the OS's figures are the truer ones
  // there. An integrated GPU's DEVICE_LOCAL heap is the share of RAM its driver will map, which the
  // physical memory overstates, so Vulkan wins for it.
  const std::optional<VulkanMemory> vulkan =
      adapter.adapter_type == "cpu" ? std::nullopt : vulkan_memory_of(adapter);
  if (vulkan) {
    memory.total = vulkan->total;
    memory.total_source = "vulkan";
  } else if (host.total > 0) {
    memory.total = host.total;
    memory.total_source = "host";
  } else {
    memory.total = context.limits().maxBufferSize;
    memory.total_source = "maxBufferSize";
  }
  if (vulkan && vulkan->free) {
    memory.free = std::min(*vulkan->free, memory.total);
    memory.free_source = "budget";
  } else {
    const auto stats = device_allocator().getDeviceStats(static_cast<c10::DeviceIndex>(index));
    const auto reserved = static_cast<uint64_t>(std::max<int64_t>(stats.reserved_bytes[0].current, 0));
    memory.free = memory.total > reserved ? memory.total - reserved : 0;
    memory.free_source = "reserved";
  }
  memory.free = std::min(memory.free, ceiling);
  return memory;
}

} // namespace torch_dml::runtime
