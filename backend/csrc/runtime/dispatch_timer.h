// Per-dispatch device timing, on only while a profiler session runs (runtime/activity_profiler.cpp).
//
// With timestamp queries inside passes (wgpu-native's timestamp-query-inside-passes, which lavapipe
// has) a timestamp is written before and after each dispatch in the batcher's long compute pass, the
// queries of a submit are resolved into a readback buffer as it is finished, and everything is read
// back once, when the session stops: profiling adds two timestamp writes per dispatch and no waits.
// Without that feature (or with TORCH_DML_PROFILE_CLOCK=host) each dispatch is submitted on its own
// and waited for, and the host's wall time around it is its duration.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "webgpu/handle.h"

namespace torch_dml::runtime {

class DeviceContext;

// One timed dispatch. Times are in the profiler's clock (c10::getTime(): ns since the epoch).
struct DispatchTiming {
  int device = 0;
  std::string kernel;
  uint32_t groups[3] = {1, 1, 1};
  uint64_t correlation = 0; // the profiled op that launched it; 0 when none was open
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  bool device_clock = true; // false: host wall time around a dispatch submitted and waited for alone
};

// The op being profiled on this thread: the profiler pushes its correlation id as an op starts and
// pops it as it ends (ops nest), and dispatches recorded meanwhile carry the innermost one.
void push_profiler_correlation(uint64_t id);
void pop_profiler_correlation();
uint64_t current_profiler_correlation();

class DispatchTimer {
 public:
  // Calibrates the device clock against the host's; the caller holds the device lock and has
  // synchronized the stream.
  explicit DispatchTimer(DeviceContext& context);
  ~DispatchTimer();

  bool device_clock() const { return device_clock_; }
  // Device clock: whether one more dispatch's pair of timestamps fits before the next resolve.
  bool full() const { return next_query_ + 2 > kQueries; }
  // Device clock: timestamps written into the open pass around one dispatch.
  void begin(WGPUComputePassEncoder pass, WGPUComputePipeline pipeline, uint32_t groups_x, uint32_t groups_y,
             uint32_t groups_z);
  void end(WGPUComputePassEncoder pass);
  // Host clock: one dispatch timed around its own submit and wait.
  void record_host(WGPUComputePipeline pipeline, uint32_t groups_x, uint32_t groups_y, uint32_t groups_z,
                   int64_t start_ns, int64_t end_ns);
  // Before the encoder is finished: resolves its queries into a buffer read back at collect().
  void resolve(WGPUCommandEncoder encoder);
  // After the device has finished all submitted work: the timings, with kernel names from `labels`.
  void collect(const std::unordered_map<WGPUComputePipeline, std::string>& labels, std::vector<DispatchTiming>& out);

 private:
  static constexpr uint32_t kQueries = 4096; // WebGPU's largest query set

  struct Pending {
    WGPUComputePipeline pipeline;
    uint32_t groups[3];
    uint64_t correlation;
    int64_t start_ns; // host clock; device clock: filled in at collect()
    int64_t end_ns;
    uint32_t batch;   // index into readbacks_ (device clock)
    uint32_t query;   // first of the pair within the batch
  };

  DeviceContext& context_;
  bool device_clock_ = false;
  webgpu::QuerySet queries_;
  webgpu::Buffer resolved_;
  std::vector<webgpu::Buffer> readbacks_;
  std::vector<uint32_t> readback_counts_;
  uint32_t next_query_ = 0;
  std::vector<Pending> pending_;
  double period_ns_ = 1.0;    // ns per device tick
  uint64_t anchor_ticks_ = 0; // a device timestamp...
  int64_t anchor_ns_ = 0;     // ...and the host time it corresponds to
};

} // namespace torch_dml::runtime
