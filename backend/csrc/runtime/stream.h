// The command batcher: one per device, the single place that decides when recorded work is submitted.
//
// Dispatches go into one long compute pass (about 1-2 us each) and are submitted when the host needs
// data, before a queue write into a buffer that pending work uses (queue writes are ordered before the
// whole pending encoder), with each chunk of a large upload, and every `flush_every` dispatches so the
// GPU never starves.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "webgpu/handle.h"

namespace torch_dml::runtime {

class DeviceChecks;
class DeviceContext;
class DispatchTimer;
struct DispatchTiming;
struct UploadBuffers;

struct StorageBinding {
  WGPUBuffer buffer = nullptr;
  uint64_t offset = 0; // bytes, a multiple of minStorageBufferOffsetAlignment
  uint64_t size = 0;   // bytes, a multiple of 4
};

// Multi-tensor launches bind up to this many; the other kernels 8 at most (WebGPU's default limit).
constexpr uint32_t kMaxStorageBindings = 32;

// What a bind group is made of; the parameters block is bound at a dynamic offset, so a training
// loop that reuses its buffers reuses its bind groups (creating one costs more than the dispatch).
struct BindGroupKey {
  uint32_t storage_count = 0;
  uint32_t params_size = 0;
  StorageBinding bindings[kMaxStorageBindings] = {};

  bool operator==(const BindGroupKey& other) const;
};

struct BindGroupKeyHash {
  size_t operator()(const BindGroupKey& key) const;
};

class CommandStream {
 public:
  explicit CommandStream(DeviceContext& context);
  ~CommandStream();

  // The layout every kernel uses: `storage_count` read_write storage buffers at bindings
  // 0..storage_count-1 (read_write everywhere, so in-place ops may bind one buffer twice), then one
  // uniform block of parameters at binding `storage_count` (bound at a dynamic offset).
  WGPUPipelineLayout pipeline_layout(uint32_t storage_count);

  void dispatch(WGPUComputePipeline pipeline, uint32_t storage_count, const StorageBinding* bindings,
                const void* params, size_t params_size, uint32_t groups_x, uint32_t groups_y = 1,
                uint32_t groups_z = 1);

  // Device-side copy outside the compute pass (ends the pass; offsets and size multiples of 4).
  void copy_buffer(WGPUBuffer src, uint64_t src_offset, WGPUBuffer dst, uint64_t dst_offset, uint64_t size);

  // Host -> device, in order with the work recorded before and after it; offset and size multiples of
  // 4. Up to 64 KiB a queue write (flushing first if pending work touches `buffer`), larger writes in
  // chunks through the stream's reused upload buffers (runtime/uploads.cpp). The bytes are all copied
  // out of `data` when it returns.
  void write(WGPUBuffer buffer, uint64_t offset, const void* data, uint64_t size);
  // Test hook: the next upload buffer mapped again asks for a range past its end, so wgpu refuses it
  // and the write raises.
  void fail_next_upload_map();

  // Device -> host, synchronous: submits pending work, copies through the device's reused readback
  // buffers (runtime/transfers.cpp); any byte offset and size. Raises a failed device check
  // (runtime/device_checks.h) once the bytes are copied.
  void read(WGPUBuffer buffer, uint64_t offset, void* data, uint64_t size);

  void flush();
  // Waits for everything submitted; raises a failed device check.
  void synchronize();
  // The device's pending input checks (made on first use).
  DeviceChecks& checks();
  // Non-blocking: whether everything submitted so far has finished.
  bool query();

  // Drops every cached bind group: called before buffers are destroyed, since a cached group keeps
  // its buffers alive and a new buffer may reuse a destroyed one's handle address.
  void forget_bind_groups() { bind_groups_.clear(); }

  // Profiling (runtime/dispatch_timer.h): between start_timing and stop_timing every dispatch is timed
  // on the device. Off, the only cost is one branch per dispatch.
  void start_timing();
  bool timing() const { return timer_ != nullptr; }
  // Waits for the device and appends what was measured since start_timing to `out`.
  void stop_timing(std::vector<DispatchTiming>& out);
  // The kernel's name, for profiler traces (set once, when the pipeline is compiled).
  void label_pipeline(WGPUComputePipeline pipeline, std::string name);

  uint64_t dispatch_count() const { return dispatch_count_; }
  uint64_t submit_count() const { return submit_count_; }
  // Times the host waited for the device (read, synchronize): each drains the GPU's queue.
  uint64_t wait_count() const { return wait_count_; }
  uint64_t bind_group_count() const { return bind_groups_created_; }

 private:
  void ensure_encoder();
  void ensure_pass();
  void end_pass();
  // Whether checks are pending: then records their record's copy-out in the open encoder.
  bool copy_out_checks();
  void note_use(WGPUBuffer buffer) { pending_buffers_.insert(buffer); }
  WGPUBindGroup bind_group(const BindGroupKey& key);
  template <bool kTimed>
  void record_dispatch(WGPUComputePipeline pipeline, uint32_t storage_count, const StorageBinding* bindings,
                       const void* params, size_t params_size, uint32_t groups_x, uint32_t groups_y,
                       uint32_t groups_z);
  void timed_dispatch(WGPUComputePipeline pipeline, uint32_t storage_count, const StorageBinding* bindings,
                      const void* params, size_t params_size, uint32_t groups_x, uint32_t groups_y,
                      uint32_t groups_z);

  DeviceContext& context_;
  webgpu::CommandEncoder encoder_;
  webgpu::ComputePass pass_;
  std::unordered_set<WGPUBuffer> pending_buffers_;
  uint32_t pending_dispatches_ = 0;
  uint32_t flush_every_;

  // Parameters of the pending dispatches, uploaded into the uniform ring in one write per submit.
  std::vector<uint8_t> params_;
  webgpu::Buffer params_ring_;
  struct ParamsReuse; // what the ring holds, by content (stream.cpp)
  std::unique_ptr<ParamsReuse> reuse_;
  uint64_t params_capacity_;
  uint32_t params_alignment_;

  struct Layout {
    webgpu::BindGroupLayout group;
    webgpu::PipelineLayout pipeline;
  };
  std::map<uint32_t, Layout> layouts_;
  std::unordered_map<BindGroupKey, webgpu::BindGroup, BindGroupKeyHash> bind_groups_;
  uint64_t bind_groups_created_ = 0;
  // What the open pass last set, so repeated kernels skip redundant state changes.
  WGPUComputePipeline pass_pipeline_ = nullptr;


  WGPUSubmissionIndex last_submission_ = 0;
  bool submitted_ = false;
  uint64_t dispatch_count_ = 0;
  uint64_t submit_count_ = 0;
  uint64_t wait_count_ = 0;

  std::unique_ptr<UploadBuffers> uploads_; // made by the first large write
  std::unique_ptr<DeviceChecks> checks_;   // made by the first device check

  std::unique_ptr<DispatchTimer> timer_;
  std::unordered_map<WGPUComputePipeline, std::string> pipeline_labels_;
};

} // namespace torch_dml::runtime
