// dml kernels in torch.profiler traces: a Kineto activity profiler registered for PrivateUse1, used by
// torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]). While a
// session runs every device's command stream times its dispatches (runtime/dispatch_timer.h); at the
// end each dispatch becomes a kernel event linked to the op that launched it, so it shows in
// key_averages() as the op's device time and in export_chrome_trace() on the device's track.
#include "runtime/profiler_stubs.h"

#if __has_include(<torch/csrc/profiler/standalone/privateuse1_profiler.h>) && \
    __has_include(<kineto/IActivityProfiler.h>)
#define TORCH_DML_HAS_KINETO_REGISTRY 1
#endif

#ifdef TORCH_DML_HAS_KINETO_REGISTRY

// Kineto's GenericTraceActivity::addMetadata formats through fmt, whose compiled part torch keeps
// private to libtorch: this file gets its own (header-only) copy.
#define FMT_HEADER_ONLY
#include <c10/macros/Export.h>
#include <c10/util/ApproximateClock.h>
#include <kineto/IActivityProfiler.h>
#include <kineto/libkineto.h>
#include <kineto/output_base.h>

#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "runtime/device.h"
#include "runtime/dispatch_timer.h"
#include "runtime/stream.h"

// torch/csrc/profiler/standalone/privateuse1_profiler.h declares this registry, but includes
// <IActivityProfiler.h> from kineto's own include directory, which torch's extension build does not
// list; declaring the two members used here keeps the build flags torch gives every extension.
namespace torch::profiler::impl {
class TORCH_API PrivateUse1ProfilerRegistry {
 public:
  static PrivateUse1ProfilerRegistry& instance();
  void registerFactory(std::function<std::unique_ptr<libkineto::IActivityProfiler>()> factory);
};
} // namespace torch::profiler::impl

namespace torch_dml::runtime {
namespace {

const char* kName = "dml";

std::string grid_text(const uint32_t groups[3]) {
  return "[" + std::to_string(groups[0]) + ", " + std::to_string(groups[1]) + ", " + std::to_string(groups[2]) +
      "]";
}

class DmlProfilerSession final : public libkineto::IActivityProfilerSession {
 public:
  void start() override {
    start_ns_ = c10::getTime();
    for (int i = 0; i < device_count(); ++i) {
      if (!device_initialized(i)) continue;
      DeviceContext& context = device_context(i);
      std::lock_guard<std::recursive_mutex> lock(context.mutex());
      try {
        context.stream().start_timing();
        devices_.push_back(i);
      } catch (const std::exception& e) {
        // The profile goes on without this device's kernels; the reason is in the trace's errors.
        errors_.push_back(std::string("torch_dml: timing kernels on dml:") + std::to_string(i) + " failed: " + e.what());
      }
    }
    status_ = libkineto::TraceStatus::RECORDING;
  }

  void stop() override {
    for (int i : devices_) {
      DeviceContext& context = device_context(i);
      std::lock_guard<std::recursive_mutex> lock(context.mutex());
      try {
        context.stream().stop_timing(timings_);
      } catch (const std::exception& e) {
        errors_.push_back(std::string("torch_dml: reading kernel timings failed: ") + e.what());
      }
    }
    end_ns_ = c10::getTime();
    status_ = libkineto::TraceStatus::PROCESSING;
  }

  std::vector<std::string> errors() override { return errors_; }

  void processTrace(libkineto::ActivityLogger& logger) override {
    processTrace(logger, [](int32_t) -> const libkineto::ITraceActivity* { return nullptr; }, start_ns_, end_ns_);
  }

  // The kernels become activities of a buffer handed to Kineto afterwards (getTraceBuffer): the logger
  // keeps pointers to them, so they must live as long as the trace.
  void processTrace(libkineto::ActivityLogger& logger, libkineto::getLinkedActivityCallback linked_op, int64_t,
                    int64_t) override {
    buffer_ = std::make_unique<libkineto::CpuTraceBuffer>();
    buffer_->span = libkineto::TraceSpan(start_ns_, end_ns_, kName);
    buffer_->gpuOpCount = static_cast<int>(timings_.size());
    for (const DispatchTiming& t : timings_) {
      auto activity = std::make_unique<libkineto::GenericTraceActivity>(
          buffer_->span, libkineto::ActivityType::CONCURRENT_KERNEL, t.kernel);
      activity->startTime = t.start_ns;
      activity->endTime = t.end_ns;
      activity->device = t.device;
      activity->resource = 0; // one queue per device
      activity->id = static_cast<int32_t>(t.correlation);
      const libkineto::ITraceActivity* op = t.correlation ? linked_op(static_cast<int32_t>(t.correlation)) : nullptr;
      activity->linked = op;
      if (op) activity->addMetadataQuoted("op", op->name());
      activity->addMetadata("grid", grid_text(t.groups));
      activity->addMetadataQuoted("clock", t.device_clock ? "device timestamps" : "host wall time, synchronous");
      activity->addMetadata("device", t.device);
      logger.handleActivity(*activity);
      buffer_->activities.push_back(std::move(activity));
    }
    timings_.clear();
  }

  std::unique_ptr<libkineto::DeviceInfo> getDeviceInfo() override {
    const int device = devices_.empty() ? 0 : devices_.front();
    return std::make_unique<libkineto::DeviceInfo>(libkineto::DeviceInfo{
        device, device, "dml", "dml:" + std::to_string(device)});
  }

  std::vector<libkineto::ResourceInfo> getResourceInfos() override {
    std::vector<libkineto::ResourceInfo> resources;
    for (int device : devices_) resources.push_back(libkineto::ResourceInfo{0, 0, device, "dml queue"});
    return resources;
  }

  std::unique_ptr<libkineto::CpuTraceBuffer> getTraceBuffer() override { return std::move(buffer_); }

  void pushCorrelationId(uint64_t id) override { push_profiler_correlation(id); }
  void popCorrelationId() override { pop_profiler_correlation(); }

 private:
  int64_t start_ns_ = 0;
  int64_t end_ns_ = 0;
  std::vector<int> devices_;
  std::vector<DispatchTiming> timings_;
  std::vector<std::string> errors_;
  std::unique_ptr<libkineto::CpuTraceBuffer> buffer_;
};

class DmlActivityProfiler final : public libkineto::IActivityProfiler {
 public:
  const std::string& name() const override { return name_; }
  const std::set<libkineto::ActivityType>& availableActivities() const override { return activities_; }

  // A session only when device activity was asked for: a CPU-only profile leaves dispatches untimed.
  std::unique_ptr<libkineto::IActivityProfilerSession> configure(const std::set<libkineto::ActivityType>& types,
                                                                 const libkineto::Config&) override {
    if (!types.count(libkineto::ActivityType::CONCURRENT_KERNEL)) return nullptr;
    return std::make_unique<DmlProfilerSession>();
  }

  std::unique_ptr<libkineto::IActivityProfilerSession> configure(int64_t, int64_t,
                                                                 const std::set<libkineto::ActivityType>& types,
                                                                 const libkineto::Config& config) override {
    return configure(types, config);
  }

 private:
  std::string name_ = "torch_dml";
  std::set<libkineto::ActivityType> activities_{libkineto::ActivityType::CONCURRENT_KERNEL};
};

} // namespace

bool register_activity_profiler() {
  torch::profiler::impl::PrivateUse1ProfilerRegistry::instance().registerFactory(
      [] { return std::make_unique<DmlActivityProfiler>(); });
  return true;
}

} // namespace torch_dml::runtime

#else

namespace torch_dml::runtime {
bool register_activity_profiler() {
  return false;
}
} // namespace torch_dml::runtime

#endif
