// Pinned host memory. WebGPU has no page-locked host memory: "pinned" tensors are ordinary host memory
// that remembers it was asked for, so pin_memory()/is_pinned() and DataLoader(pin_memory=True) behave
// as users expect. It is also the at::HostAllocator that torch.accelerator's host-memory calls reach
// (empty_host_cache and the host stats): with none registered, ATen release builds call through a null
// pointer.
#pragma once

#include <ATen/core/CachingHostAllocator.h>

#include <map>
#include <mutex>

namespace torch_dml::runtime {

class HostAllocator final : public at::HostAllocator {
 public:
  c10::DataPtr allocate(size_t nbytes) override;
  void copy_data(void* dest, const void* src, std::size_t count) const override { default_copy_data(dest, src, count); }

  // Host -> device copies are taken in by the queue before they return, so a pinned block never waits
  // on a stream; nothing is cached, so there is nothing to empty.
  bool record_event(void*, void*, c10::Stream) override { return true; }
  void empty_cache() override {}

  at::HostStats get_stats() override;
  void reset_accumulated_stats() override;
  void reset_peak_stats() override;

  // Whether ptr is any address inside a live pinned block, not only its start: a storage sliced out of
  // a pinned one (untyped_storage()[n:]) starts inside the block and is just as pinned.
  bool owns(const void* ptr);

 private:
  struct Block;
  static void free(void* context);

  std::mutex mutex_;
  std::map<const char*, size_t> live_; // block start -> bytes
  at::HostStats stats_;
};

HostAllocator& host_allocator();

} // namespace torch_dml::runtime
