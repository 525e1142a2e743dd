// A command stream's upload buffers (runtime/uploads.cpp): three MAP_WRITE|COPY_SRC buffers of 8 MiB
// that large host -> device writes pass through, each mapped while the host may fill it.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/buffer_map.h"
#include "webgpu/handle.h"

namespace torch_dml::runtime {

struct UploadBuffers {
  // Three rather than the readbacks' two: a buffer is mapped again only once its copy is done and a
  // poll has delivered the map, so a third keeps the host filling while that answer is on its way.
  static constexpr int kSlots = 3;

  struct Slot {
    webgpu::Buffer buffer;
    uint64_t size = 0;
    uint8_t* mapped = nullptr; // set while the host may fill the buffer
    WGPUSubmissionIndex last_use = 0;
  };

  // Requests given up after a failed map: wgpu may still answer them, up to the release of their
  // buffer, so they are declared before (and destroyed after) the slots.
  std::vector<std::unique_ptr<MapRequest>> abandoned;
  // The request every map uses while none fails.
  std::unique_ptr<MapRequest> request = std::make_unique<MapRequest>();
  Slot slots[kSlots];
  // The slot the next chunk takes: the one whose copy was submitted longest ago, across writes too.
  int next = 0;
  bool fail_next_map = false;
};

} // namespace torch_dml::runtime
