// How much memory a dml device has and how much of it is free, as far as anyone can tell. WebGPU has
// no memory query (no heap sizes, no budget), so the answer is assembled from what is known and says
// where its total came from.
#pragma once

#include <cstdint>

namespace torch_dml::runtime {

struct DeviceMemory {
  uint64_t free = 0;
  uint64_t total = 0;
  // "host": a CPU or integrated adapter, whose buffers live in system memory: the machine's physical
  //         memory, with free also bounded by what the OS reports available.
  // "maxBufferSize": a discrete or unknown adapter: the largest buffer the adapter allows, a lower
  //         bound on its memory (WebGPU exposes nothing closer).
  const char* total_source = "";
};

// free = total minus what torch_dml's caching allocator has reserved on the device (other processes'
// use is invisible to WebGPU), never negative.
DeviceMemory device_memory(int index);

} // namespace torch_dml::runtime
