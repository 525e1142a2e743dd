// The caching device allocator. Tensors get fake, unique device addresses (never dereferenced on the
// host) that map back to a WebGPU buffer and a byte offset; freed blocks are cached by size and reused.
//
// One WebGPU buffer per block keeps every tensor's storage inside one binding, which kernels need; the
// size classes keep reuse high: 512 B steps up to 1 MiB, 2 MiB steps above.
#pragma once

#include <c10/core/CachingDeviceAllocator.h>
#include <c10/core/StorageImpl.h>

#include <cstdint>
#include <utility>

#include "webgpu/procs.h"

namespace torch_dml::runtime {

struct BufferSpan {
  WGPUBuffer buffer = nullptr;
  uint64_t offset = 0;      // bytes from the start of the buffer to the pointer
  uint64_t buffer_size = 0; // bytes in the whole buffer (>= offset + the tensor's bytes)
  int device = 0;
};

class DeviceAllocator final : public c10::DeviceAllocator {
 public:
  c10::DataPtr allocate(size_t nbytes) override;
  c10::DeleterFnPtr raw_deleter() const override;
  void copy_data(void* dest, const void* src, std::size_t count) const override;

  bool initialized() override { return true; }
  void emptyCache(c10::MempoolId_t mempool_id = {0, 0}) override;
  void recordStream(const c10::DataPtr&, c10::Stream) override {} // one queue per device: nothing to track
  c10::CachingDeviceAllocator::DeviceStats getDeviceStats(c10::DeviceIndex device) override;
  void resetAccumulatedStats(c10::DeviceIndex device) override;
  void resetPeakStats(c10::DeviceIndex device) override;
  // torch.accelerator.get_memory_info: (free, total) as runtime/device_memory.h estimates them.
  std::pair<size_t, size_t> getMemoryInfo(c10::DeviceIndex device) override;

  // Where a device pointer (any address inside a live allocation) lives; throws for unknown pointers.
  BufferSpan resolve(const void* ptr) const;
  // The device a pointer belongs to, or -1.
  int device_of(const void* ptr) const noexcept;
  // Allocates on an explicit device (allocate() uses the current one).
  c10::DataPtr allocate_on(int device, size_t nbytes);
};

DeviceAllocator& device_allocator();

// Gives a dml storage `nbytes` of fresh memory, keeping the first min(old, new) bytes. ATen's CPU
// resize helpers would memcpy device addresses, so every storage resize on dml comes here.
void resize_storage_bytes(c10::StorageImpl* storage, size_t nbytes);

} // namespace torch_dml::runtime
