#include "runtime/device_memory.h"

#include <algorithm>

#include "runtime/allocator.h"
#include "runtime/device.h"

#ifdef _WIN32
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
#ifdef _SC_AVPHYS_PAGES
  const long free_pages = sysconf(_SC_AVPHYS_PAGES);
  if (page > 0 && free_pages > 0) host.available = static_cast<uint64_t>(page) * static_cast<uint64_t>(free_pages);
#else
  host.available = host.total; // macOS has no free-page count in sysconf
#endif
#endif
  return host;
}

} // namespace

DeviceMemory device_memory(int index) {
  DeviceContext& context = device_context(index);
  const std::string& type = context.adapter().adapter_type;
  DeviceMemory memory;
  uint64_t ceiling = UINT64_MAX;
  const HostMemory host = (type == "cpu" || type == "integrated") ? host_memory() : HostMemory{};
  if (host.total > 0) {
    memory.total = host.total;
    memory.total_source = "host";
    // _SC_AVPHYS_PAGES counts free pages only (not reclaimable cache): an underestimate, the safe side.
    if (host.available > 0) ceiling = host.available;
  } else {
    memory.total = context.limits().maxBufferSize;
    memory.total_source = "maxBufferSize";
  }
  const auto stats = device_allocator().getDeviceStats(static_cast<c10::DeviceIndex>(index));
  const auto reserved = static_cast<uint64_t>(std::max<int64_t>(stats.reserved_bytes[0].current, 0));
  memory.free = std::min(memory.total > reserved ? memory.total - reserved : 0, ceiling);
  return memory;
}

} // namespace torch_dml::runtime
