#include "runtime/dispatch_timer.h"

#include <c10/util/ApproximateClock.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string_view>

#include "runtime/device.h"

namespace torch_dml::runtime {
namespace {

using webgpu::wgpu;

// Clock calibrations tried at most, and the submit-to-wait interval that ends them early (an anchor
// off by at most half of it).
constexpr int kCalibrations = 5;
constexpr int64_t kCalibratedNs = 200'000;

thread_local std::vector<uint64_t> t_correlations;

bool host_clock_forced() {
  const char* value = std::getenv("TORCH_DML_PROFILE_CLOCK");
  return value && std::string_view(value) == "host";
}

struct MapResult {
  bool done = false;
  WGPUMapAsyncStatus status = WGPUMapAsyncStatus_Error;
};

void on_mapped(WGPUMapAsyncStatus status, WGPUStringView, void* userdata1, void*) {
  auto* result = static_cast<MapResult*>(userdata1);
  result->done = true;
  result->status = status;
}

// Maps every buffer, waits once for all of them, and hands each mapping to `read`.
template <typename Read>
void read_back(DeviceContext& context, const std::vector<webgpu::Buffer>& buffers, const std::vector<uint32_t>& counts,
               Read&& read) {
  std::vector<MapResult> results(buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    WGPUBufferMapCallbackInfo callback = WGPU_BUFFER_MAP_CALLBACK_INFO_INIT;
    callback.mode = WGPUCallbackMode_AllowProcessEvents;
    callback.callback = on_mapped;
    callback.userdata1 = &results[i];
    wgpu().BufferMapAsync(buffers[i].get(), WGPUMapMode_Read, 0, counts[i] * sizeof(uint64_t), callback);
  }
  wgpu().DevicePoll(context.device(), true, nullptr);
  context.check("reading back profiler timestamps");
  for (size_t i = 0; i < buffers.size(); ++i) {
    TORCH_CHECK(results[i].done && results[i].status == WGPUMapAsyncStatus_Success,
                "torch_dml: mapping the profiler's timestamps failed on ", context.describe());
    const auto* ticks = static_cast<const uint64_t*>(
        wgpu().BufferGetConstMappedRange(buffers[i].get(), 0, counts[i] * sizeof(uint64_t)));
    TORCH_CHECK(ticks, "torch_dml: the profiler's timestamp buffer has no mapping on ", context.describe());
    read(i, ticks);
    wgpu().BufferUnmap(buffers[i].get());
  }
}

} // namespace

void push_profiler_correlation(uint64_t id) {
  t_correlations.push_back(id);
}

void pop_profiler_correlation() {
  if (!t_correlations.empty()) t_correlations.pop_back();
}

uint64_t current_profiler_correlation() {
  return t_correlations.empty() ? 0 : t_correlations.back();
}

DispatchTimer::DispatchTimer(DeviceContext& context) : context_(context) {
  device_clock_ = context.has(Feature::TimestampQueryInsidePasses) && !host_clock_forced();
  if (!device_clock_) return;

  WGPUQuerySetDescriptor descriptor = WGPU_QUERY_SET_DESCRIPTOR_INIT;
  descriptor.label = webgpu::view("torch_dml profiler timestamps");
  descriptor.type = WGPUQueryType_Timestamp;
  descriptor.count = kQueries;
  queries_ = webgpu::QuerySet(wgpu().DeviceCreateQuerySet(context.device(), &descriptor));
  context.check("creating the profiler's timestamp queries");
  resolved_ = context.create_buffer(kQueries * sizeof(uint64_t), WGPUBufferUsage_QueryResolve | WGPUBufferUsage_CopySrc,
                                    "torch_dml profiler timestamps (resolved)");
  period_ns_ = wgpu().QueueGetTimestampPeriod(context.queue());

  // Where the device clock stands against the host's: one timestamp written alone, taken to have been
  // written halfway between its submit and the end of the wait for it (off by at most half that
  // interval; durations do not depend on it). On a busy host one such wait can take milliseconds, so
  // the tightest of a few tries counts.
  int64_t tightest = std::numeric_limits<int64_t>::max();
  for (int attempt = 0; attempt < kCalibrations && tightest > kCalibratedNs; ++attempt) {
    WGPUCommandEncoderDescriptor encoder_descriptor = WGPU_COMMAND_ENCODER_DESCRIPTOR_INIT;
    webgpu::CommandEncoder encoder(wgpu().DeviceCreateCommandEncoder(context.device(), &encoder_descriptor));
    wgpu().CommandEncoderWriteTimestamp(encoder.get(), queries_.get(), 0);
    next_query_ = 1;
    resolve(encoder.get());
    WGPUCommandBufferDescriptor finish = WGPU_COMMAND_BUFFER_DESCRIPTOR_INIT;
    webgpu::CommandBuffer commands(wgpu().CommandEncoderFinish(encoder.get(), &finish));
    context.check("calibrating the profiler's clock");
    WGPUCommandBuffer raw = commands.get();
    const int64_t submitted = c10::getTime();
    WGPUSubmissionIndex index = wgpu().QueueSubmitForIndex(context.queue(), 1, &raw);
    wgpu().DevicePoll(context.device(), true, &index);
    const int64_t finished = c10::getTime();
    uint64_t ticks = 0;
    read_back(context, readbacks_, readback_counts_, [&](size_t, const uint64_t* mapped) { ticks = mapped[0]; });
    readbacks_.clear();
    readback_counts_.clear();
    if (finished - submitted < tightest) {
      tightest = finished - submitted;
      anchor_ticks_ = ticks;
      anchor_ns_ = submitted + (finished - submitted) / 2;
    }
  }
}

DispatchTimer::~DispatchTimer() = default;

void DispatchTimer::begin(WGPUComputePassEncoder pass, WGPUComputePipeline pipeline, uint32_t groups_x,
                          uint32_t groups_y, uint32_t groups_z) {
  const auto batch = static_cast<uint32_t>(readbacks_.size());
  pending_.push_back({pipeline, {groups_x, groups_y, groups_z}, current_profiler_correlation(), 0, 0, batch, next_query_});
  wgpu().ComputePassEncoderWriteTimestamp(pass, queries_.get(), next_query_++);
}

void DispatchTimer::end(WGPUComputePassEncoder pass) {
  wgpu().ComputePassEncoderWriteTimestamp(pass, queries_.get(), next_query_++);
}

void DispatchTimer::record_host(WGPUComputePipeline pipeline, uint32_t groups_x, uint32_t groups_y, uint32_t groups_z,
                                int64_t start_ns, int64_t end_ns) {
  pending_.push_back({pipeline, {groups_x, groups_y, groups_z}, current_profiler_correlation(), start_ns, end_ns, 0, 0});
}

void DispatchTimer::resolve(WGPUCommandEncoder encoder) {
  if (!device_clock_ || next_query_ == 0) return;
  const uint64_t bytes = next_query_ * sizeof(uint64_t);
  wgpu().CommandEncoderResolveQuerySet(encoder, queries_.get(), 0, next_query_, resolved_.get(), 0);
  readbacks_.push_back(context_.create_buffer(bytes, WGPUBufferUsage_MapRead | WGPUBufferUsage_CopyDst,
                                              "torch_dml profiler timestamps (readback)"));
  wgpu().CommandEncoderCopyBufferToBuffer(encoder, resolved_.get(), 0, readbacks_.back().get(), 0, bytes);
  readback_counts_.push_back(next_query_);
  next_query_ = 0;
}

void DispatchTimer::collect(const std::unordered_map<WGPUComputePipeline, std::string>& labels,
                            std::vector<DispatchTiming>& out) {
  if (device_clock_ && !readbacks_.empty()) {
    std::vector<std::vector<uint64_t>> ticks(readbacks_.size());
    read_back(context_, readbacks_, readback_counts_, [&](size_t i, const uint64_t* mapped) {
      ticks[i].assign(mapped, mapped + readback_counts_[i]);
    });
    auto to_host = [&](uint64_t t) {
      return anchor_ns_ + static_cast<int64_t>((static_cast<double>(t) - static_cast<double>(anchor_ticks_)) * period_ns_);
    };
    for (Pending& p : pending_) {
      if (p.batch >= ticks.size()) continue; // never resolved: its submit did not happen
      p.start_ns = to_host(ticks[p.batch][p.query]);
      p.end_ns = to_host(ticks[p.batch][p.query + 1]);
    }
  }
  for (const Pending& p : pending_) {
    if (device_clock_ && p.batch >= readbacks_.size()) continue;
    DispatchTiming timing;
    timing.device = context_.index();
    auto label = labels.find(p.pipeline);
    timing.kernel = label == labels.end() ? "dml kernel" : label->second;
    std::memcpy(timing.groups, p.groups, sizeof(timing.groups));
    timing.correlation = p.correlation;
    timing.start_ns = p.start_ns;
    timing.end_ns = std::max(p.end_ns, p.start_ns);
    timing.device_clock = device_clock_;
    out.push_back(std::move(timing));
  }
  pending_.clear();
  readbacks_.clear();
  readback_counts_.clear();
}

} // namespace torch_dml::runtime
