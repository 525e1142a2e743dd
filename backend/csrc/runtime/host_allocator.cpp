#include "runtime/host_allocator.h"

#include <c10/core/CPUAllocator.h>

#include <memory>

namespace torch_dml::runtime {

// What free() needs to hand the block back to the CPU allocator that made it.
struct HostAllocator::Block {
  void* data;
  size_t nbytes;
  void* context;
  c10::DeleterFnPtr deleter;
};

c10::DataPtr HostAllocator::allocate(size_t nbytes) {
  c10::DataPtr data = c10::GetCPUAllocator()->allocate(nbytes);
  void* raw = data.get();
  const c10::DeleterFnPtr deleter = data.get_deleter();
  auto block = std::make_unique<Block>(Block{raw, nbytes, data.release_context(), deleter});
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (raw) live_[static_cast<const char*>(raw)] = nbytes;
    stats_.active_requests.increase(1);
    stats_.allocations.increase(1);
    stats_.active_bytes.increase(nbytes);
    stats_.allocated_bytes.increase(nbytes);
    ++stats_.num_host_alloc;
  }
  return c10::DataPtr(raw, block.release(), &HostAllocator::free, c10::Device(c10::DeviceType::CPU));
}

void HostAllocator::free(void* context) {
  std::unique_ptr<Block> block(static_cast<Block*>(context));
  HostAllocator& self = host_allocator();
  {
    std::lock_guard<std::mutex> lock(self.mutex_);
    self.live_.erase(static_cast<const char*>(block->data));
    self.stats_.active_requests.decrease(1);
    self.stats_.allocations.decrease(1);
    self.stats_.active_bytes.decrease(block->nbytes);
    self.stats_.allocated_bytes.decrease(block->nbytes);
    ++self.stats_.num_host_free;
  }
  if (block->deleter) block->deleter(block->context);
}

bool HostAllocator::owns(const void* ptr) {
  const auto* address = static_cast<const char*>(ptr);
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = live_.upper_bound(address);
  if (it == live_.begin()) return false;
  --it;
  // A zero-byte block still owns its own start, which is what a zero-size pinned tensor points at.
  return address == it->first || address < it->first + it->second;
}

at::HostStats HostAllocator::get_stats() {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void HostAllocator::reset_accumulated_stats() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (c10::CachingAllocator::Stat* stat :
       {&stats_.active_requests, &stats_.active_bytes, &stats_.allocations, &stats_.allocated_bytes})
    stat->reset_accumulated();
  stats_.num_host_alloc = 0;
  stats_.num_host_free = 0;
}

void HostAllocator::reset_peak_stats() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (c10::CachingAllocator::Stat* stat :
       {&stats_.active_requests, &stats_.active_bytes, &stats_.allocations, &stats_.allocated_bytes})
    stat->reset_peak();
}

HostAllocator& host_allocator() {
  // Leaked: pinned tensors held by Python objects may be freed during static destruction.
  static auto* allocator = new HostAllocator();
  return *allocator;
}

REGISTER_HOST_ALLOCATOR(c10::DeviceType::PrivateUse1, &host_allocator())

} // namespace torch_dml::runtime
