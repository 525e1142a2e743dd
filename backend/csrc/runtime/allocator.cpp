#include "runtime/allocator.h"

#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "runtime/device.h"
#include "runtime/device_memory.h"
#include "runtime/stream.h"
#include "webgpu/error_scope.h"
#include "webgpu/handle.h"

namespace torch_dml::runtime {
namespace {

using webgpu::wgpu;
using c10::CachingAllocator::StatType;

constexpr int kAddressShift = 44; // 16 TiB of fake address space per device
constexpr uint64_t kSmallLimit = 1ull << 20;

struct Block {
  int device = 0;
  uint64_t address = 0;
  uint64_t size = 0;      // bytes of the WebGPU buffer
  uint64_t requested = 0; // bytes asked for by the live allocation
  bool in_use = false;
  webgpu::Buffer buffer;
};

struct Pool {
  std::map<uint64_t, std::unique_ptr<Block>> blocks; // by address: live and cached
  std::multimap<uint64_t, Block*> cached;           // by size
  c10::CachingDeviceAllocator::DeviceStats stats;
  uint64_t next_address = 0;
};

std::recursive_mutex& pool_mutex() {
  static std::recursive_mutex mutex;
  return mutex;
}

Pool& pool(int device) {
  // Leaked on purpose: storage freed during interpreter shutdown still finds its pool.
  static auto* pools = new std::vector<std::unique_ptr<Pool>>();
  if (pools->size() <= static_cast<size_t>(device)) pools->resize(device + 1);
  auto& slot = (*pools)[device];
  if (!slot) {
    slot = std::make_unique<Pool>();
    slot->next_address = (static_cast<uint64_t>(device) + 1) << kAddressShift;
  }
  return *slot;
}

uint64_t size_class(uint64_t nbytes) {
  const uint64_t step = nbytes <= kSmallLimit ? 512 : (2ull << 20);
  return (nbytes + step - 1) / step * step;
}

template <typename F>
void for_pool_stats(c10::CachingDeviceAllocator::StatArray& array, bool small, F&& update) {
  update(array[static_cast<size_t>(StatType::AGGREGATE)]);
  update(array[static_cast<size_t>(small ? StatType::SMALL_POOL : StatType::LARGE_POOL)]);
}

// Every stat of every kind, what resetting their accumulated or peak values walks.
template <typename F>
void for_each_stat(c10::CachingDeviceAllocator::DeviceStats& s, F&& update) {
  for (auto* array : {&s.allocation, &s.segment, &s.active, &s.inactive_split, &s.allocated_bytes,
                      &s.reserved_bytes, &s.active_bytes, &s.inactive_split_bytes, &s.requested_bytes})
    for (auto& stat : *array) update(stat);
}

void release_block(Block* block) {
  std::lock_guard<std::recursive_mutex> lock(pool_mutex());
  Pool& p = pool(block->device);
  const bool small = block->size <= kSmallLimit;
  auto& s = p.stats;
  for_pool_stats(s.allocation, small, [](auto& stat) { stat.decrease(1); });
  for_pool_stats(s.active, small, [](auto& stat) { stat.decrease(1); });
  for_pool_stats(s.allocated_bytes, small, [&](auto& stat) { stat.decrease(block->size); });
  for_pool_stats(s.active_bytes, small, [&](auto& stat) { stat.decrease(block->size); });
  for_pool_stats(s.requested_bytes, small, [&](auto& stat) { stat.decrease(block->requested); });
  block->in_use = false;
  block->requested = 0;
  p.cached.emplace(block->size, block);
}

void delete_block(void* context) {
  if (context) release_block(static_cast<Block*>(context));
}

int current_device() {
  return c10::impl::getDeviceGuardImpl(c10::DeviceType::PrivateUse1)->getDevice().index();
}

// Frees every cached block of a device; pool_mutex and the device's mutex must be held.
void free_cached(Pool& p, DeviceContext& context) {
  context.stream().forget_bind_groups();
  for (auto& [size, block] : p.cached) {
    const bool small = block->size <= kSmallLimit;
    for_pool_stats(p.stats.reserved_bytes, small, [&](auto& stat) { stat.decrease(block->size); });
    for_pool_stats(p.stats.segment, small, [](auto& stat) { stat.decrease(1); });
    // Releasing is safe with work in flight: wgpu holds its own reference until the work is done.
    p.blocks.erase(block->address);
  }
  p.cached.clear();
}

} // namespace

c10::DataPtr DeviceAllocator::allocate(size_t nbytes) {
  return allocate_on(current_device(), nbytes);
}

c10::DataPtr DeviceAllocator::allocate_on(int device, size_t nbytes) {
  const c10::Device where(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(device));
  if (nbytes == 0) return c10::DataPtr(nullptr, nullptr, &delete_block, where);

  DeviceContext& context = device_context(device);
  std::lock_guard<std::recursive_mutex> device_lock(context.mutex());
  std::lock_guard<std::recursive_mutex> lock(pool_mutex());
  Pool& p = pool(device);
  const uint64_t size = size_class(nbytes);
  const bool small = size <= kSmallLimit;

  Block* block = nullptr;
  auto found = p.cached.lower_bound(size);
  // Reuse a cached block unless it would waste more than half of itself.
  if (found != p.cached.end() && found->first < 2 * size) {
    block = found->second;
    p.cached.erase(found);
  } else {
    const uint64_t max_buffer = context.limits().maxBufferSize;
    TORCH_CHECK_WITH(OutOfMemoryError, size <= max_buffer, "torch_dml: cannot allocate ", nbytes,
                     " bytes on ", context.describe(), ": the adapter's largest buffer is ", max_buffer,
                     " bytes (maxBufferSize)");
    WGPUBufferDescriptor descriptor = WGPU_BUFFER_DESCRIPTOR_INIT;
    descriptor.size = size;
    descriptor.usage = WGPUBufferUsage_Storage | WGPUBufferUsage_CopySrc | WGPUBufferUsage_CopyDst;
    WGPUBuffer raw = nullptr;
    for (int attempt = 0; attempt < 2 && !raw; ++attempt) {
      webgpu::ErrorScope scope(context.device());
      webgpu::Buffer candidate(wgpu().DeviceCreateBuffer(context.device(), &descriptor));
      if (auto error = scope.pop()) {
        if (attempt == 0) {
          // Give cached memory back and retry once, as the CUDA caching allocator does.
          context.stream().synchronize();
          free_cached(p, context);
          ++p.stats.num_alloc_retries;
          continue;
        }
        ++p.stats.num_ooms;
        TORCH_CHECK_WITH(OutOfMemoryError, false, "torch_dml: out of memory allocating ", nbytes, " bytes on ",
                         context.describe(), " (", p.stats.allocated_bytes[0].current,
                         " bytes allocated, ", p.stats.reserved_bytes[0].current, " reserved): ", error->message);
      }
      raw = candidate.release();
    }
    auto owned = std::make_unique<Block>();
    owned->device = device;
    owned->size = size;
    owned->address = p.next_address;
    owned->buffer = webgpu::Buffer(raw);
    // A gap between blocks keeps pointer arithmetic past one block's end from landing in the next.
    p.next_address += size + 4096;
    block = owned.get();
    p.blocks.emplace(block->address, std::move(owned));
    for_pool_stats(p.stats.reserved_bytes, small, [&](auto& stat) { stat.increase(size); });
    for_pool_stats(p.stats.segment, small, [](auto& stat) { stat.increase(1); });
  }
  block->in_use = true;
  block->requested = nbytes;
  auto& s = p.stats;
  const bool block_small = block->size <= kSmallLimit;
  for_pool_stats(s.allocation, block_small, [](auto& stat) { stat.increase(1); });
  for_pool_stats(s.active, block_small, [](auto& stat) { stat.increase(1); });
  for_pool_stats(s.allocated_bytes, block_small, [&](auto& stat) { stat.increase(block->size); });
  for_pool_stats(s.active_bytes, block_small, [&](auto& stat) { stat.increase(block->size); });
  for_pool_stats(s.requested_bytes, block_small, [&](auto& stat) { stat.increase(nbytes); });
  return c10::DataPtr(reinterpret_cast<void*>(block->address), block, &delete_block, where);
}

c10::DeleterFnPtr DeviceAllocator::raw_deleter() const {
  return nullptr; // the DataPtr's context is the block, not the pointer: no raw deleter
}

void DeviceAllocator::copy_data(void* dest, const void* src, std::size_t count) const {
  if (count == 0) return;
  const BufferSpan to = resolve(dest);
  const BufferSpan from = resolve(src);
  TORCH_CHECK(to.device == from.device, "torch_dml: copy_data across devices is not supported");
  TORCH_CHECK(to.offset % 4 == 0 && from.offset % 4 == 0, "torch_dml: copy_data needs 4-byte aligned pointers");
  DeviceContext& context = device_context(to.device);
  std::lock_guard<std::recursive_mutex> lock(context.mutex());
  // Buffers are allocated in 512-byte classes, so rounding the size up to 4 stays inside both.
  context.stream().copy_buffer(from.buffer, from.offset, to.buffer, to.offset, (count + 3) / 4 * 4);
}

void DeviceAllocator::emptyCache(c10::MempoolId_t) {
  const int count = device_count();
  for (int device = 0; device < count; ++device) {
    if (!device_initialized(device)) continue;
    DeviceContext& context = device_context(device);
    std::lock_guard<std::recursive_mutex> device_lock(context.mutex());
    std::lock_guard<std::recursive_mutex> lock(pool_mutex());
    free_cached(pool(device), context);
  }
}

c10::CachingDeviceAllocator::DeviceStats DeviceAllocator::getDeviceStats(c10::DeviceIndex device) {
  std::lock_guard<std::recursive_mutex> lock(pool_mutex());
  return pool(device).stats;
}

void DeviceAllocator::resetAccumulatedStats(c10::DeviceIndex device) {
  std::lock_guard<std::recursive_mutex> lock(pool_mutex());
  auto& s = pool(device).stats;
  for_each_stat(s, [](auto& stat) { stat.reset_accumulated(); });
  s.num_alloc_retries = 0;
  s.num_ooms = 0;
}

void DeviceAllocator::resetPeakStats(c10::DeviceIndex device) {
  std::lock_guard<std::recursive_mutex> lock(pool_mutex());
  for_each_stat(pool(device).stats, [](auto& stat) { stat.reset_peak(); });
}

std::pair<size_t, size_t> DeviceAllocator::getMemoryInfo(c10::DeviceIndex device) {
  const DeviceMemory memory = device_memory(device < 0 ? current_device() : device);
  return {static_cast<size_t>(memory.free), static_cast<size_t>(memory.total)};
}

BufferSpan DeviceAllocator::resolve(const void* ptr) const {
  const auto address = reinterpret_cast<uint64_t>(ptr);
  const int device = device_of(ptr);
  TORCH_CHECK(device >= 0, "torch_dml: pointer ", ptr, " is not a dml device pointer");
  std::lock_guard<std::recursive_mutex> lock(pool_mutex());
  Pool& p = pool(device);
  auto it = p.blocks.upper_bound(address);
  TORCH_CHECK(it != p.blocks.begin(), "torch_dml: pointer ", ptr, " is not in any dml allocation");
  --it;
  Block* block = it->second.get();
  TORCH_CHECK(address <= block->address + block->size, "torch_dml: pointer ", ptr,
              " is not in any dml allocation");
  return BufferSpan{block->buffer.get(), address - block->address, block->size, device};
}

int DeviceAllocator::device_of(const void* ptr) const noexcept {
  const auto address = reinterpret_cast<uint64_t>(ptr);
  const uint64_t region = address >> kAddressShift;
  if (region == 0 || region > 256) return -1;
  return static_cast<int>(region - 1);
}

DeviceAllocator& device_allocator() {
  static DeviceAllocator allocator;
  return allocator;
}

void resize_storage_bytes(c10::StorageImpl* storage, size_t nbytes) {
  TORCH_CHECK(storage->resizable(), "torch_dml: trying to resize storage that is not resizable");
  c10::DataPtr fresh = device_allocator().allocate_on(storage->device().index(), nbytes);
  const size_t keep = std::min(nbytes, storage->nbytes());
  if (keep && storage->data()) device_allocator().copy_data(fresh.get(), storage->data(), keep);
  storage->set_data_ptr_noswap(std::move(fresh));
  storage->set_nbytes(nbytes);
}

// Registered at load time so torch.accelerator's memory API finds a DeviceAllocator for dml.
REGISTER_ALLOCATOR(c10::DeviceType::PrivateUse1, &device_allocator());

} // namespace torch_dml::runtime
