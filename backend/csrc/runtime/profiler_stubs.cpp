// The profiler's device stubs for dml, used by the legacy profiler path
// (torch.autograd.profiler.profile(use_device="dml"), torch's KINETO_PRIVATEUSE1_FALLBACK): it records
// an event as every op starts and ends and reports the time between the two as the op's device time.
// Without them torch's defaults throw from every op ("PrivateUse1 used in profiler but not enabled"),
// which floods the log with backtraces, slows profiled code a thousandfold and leaves ops unfinished
// (negative CPU times). torch.profiler.profile(activities=[..., ProfilerActivity.PrivateUse1]) takes
// the Kineto path instead (runtime/activity_profiler.cpp), which times each kernel.
#include "runtime/profiler_stubs.h"

#include <c10/core/DeviceGuard.h>
#include <c10/util/ApproximateClock.h>
#include <torch/csrc/profiler/stubs/base.h>

#include <chrono>
#include <memory>
#include <mutex>

#include "runtime/device.h"
#include "runtime/guard.h"
#include "runtime/stream.h"

namespace torch_dml::runtime {
namespace {

// When the device had finished everything submitted before it was recorded, like a timed
// torch.Event: an op's device time is then the time its own work took to drain.
struct StubEvent {
  std::chrono::steady_clock::time_point when;
};

void synchronize_quietly(int index) noexcept {
  // A profiler hook must not throw into the op it observes: a lost device reports at the next real
  // operation instead.
  if (!device_initialized(index)) return;
  try {
    DeviceContext& context = device_context(index);
    std::lock_guard<std::recursive_mutex> lock(context.mutex());
    context.stream().synchronize();
  } catch (...) {
  }
}

struct DmlProfilerStubs final : public torch::profiler::impl::ProfilerStubs {
  void record(c10::DeviceIndex* device, torch::profiler::impl::ProfilerVoidEventStub* event,
              int64_t* cpu_ns) const override {
    const int index = current_device_index();
    if (device) *device = static_cast<c10::DeviceIndex>(index);
    synchronize_quietly(index);
    auto recorded = std::make_shared<StubEvent>();
    recorded->when = std::chrono::steady_clock::now();
    *event = std::move(recorded);
    if (cpu_ns) *cpu_ns = c10::getTime();
  }

  // Microseconds, as torch's KinetoEvent::privateuse1ElapsedUs reads it (CUDA's stub does the same).
  float elapsed(const torch::profiler::impl::ProfilerVoidEventStub* start,
                const torch::profiler::impl::ProfilerVoidEventStub* end) const override {
    if (!start || !end || !*start || !*end) return 0.f;
    const auto* a = static_cast<const StubEvent*>(start->get());
    const auto* b = static_cast<const StubEvent*>(end->get());
    return std::chrono::duration<float, std::micro>(b->when - a->when).count();
  }

  // No annotation API in WebGPU that a capture tool would show; ranges are the CPU-side events.
  void mark(const char*) const override {}
  void rangePush(const char*) const override {}
  void rangePop() const override {}

  void onEachDevice(std::function<void(int)> op) const override {
    c10::DeviceGuard guard(c10::Device(c10::DeviceType::PrivateUse1, 0));
    for (int i = 0; i < device_count(); ++i) {
      guard.set_index(static_cast<c10::DeviceIndex>(i));
      op(i);
    }
  }

  void synchronize() const override {
    for (int i = 0; i < device_count(); ++i) synchronize_quietly(i);
  }

  bool enabled() const override { return true; }
};

} // namespace

void register_profiler_stubs() {
  static DmlProfilerStubs stubs;
  torch::profiler::impl::registerPrivateUse1Methods(&stubs);
}

} // namespace torch_dml::runtime
