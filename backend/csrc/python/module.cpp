// torch_dml._C: the Python face of the runtime. Thin on purpose: every function here forwards to the
// runtime or aten layer and turns results into Python objects.
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/Generator.h>
#include <torch/csrc/utils/device_lazy_init.h>
#include <torch/extension.h>

#include <string>

#include "aten/fallback.h"
#include "aten/generated_kernel_ops.h"
#include "kernels/generated_kernel.h"
#include "kernels/pipeline_cache.h"
#include "kernels/wide_tile.h"
#include "runtime/allocator.h"
#include "runtime/device.h"
#include "runtime/device_checks.h"
#include "runtime/device_memory.h"
#include "runtime/dispatch_timer.h"
#include "runtime/generator.h"
#include "runtime/guard.h"
#include "runtime/profiler_stubs.h"
#include "runtime/staging.h"
#include "runtime/stream.h"
#include "webgpu/procs.h"

namespace py = pybind11;

namespace torch_dml::python {
namespace {

PyObject* g_fallback_error = nullptr;

// Raised through torch's own exception translation, so an op called from Python surfaces as
// torch_dml.FallbackError (a NotImplementedError) instead of a bare RuntimeError.
struct FallbackError final : public torch::PyTorchError {
  using torch::PyTorchError::PyTorchError;
  PyObject* python_type() override { return g_fallback_error; }
};

void raise_fallback_error(const std::string& message) {
  throw FallbackError(message);
}

py::dict limits_dict(const WGPULimits& l) {
  py::dict d;
  d["maxBufferSize"] = l.maxBufferSize;
  d["maxStorageBufferBindingSize"] = l.maxStorageBufferBindingSize;
  d["maxUniformBufferBindingSize"] = l.maxUniformBufferBindingSize;
  d["maxStorageBuffersPerShaderStage"] = l.maxStorageBuffersPerShaderStage;
  d["minStorageBufferOffsetAlignment"] = l.minStorageBufferOffsetAlignment;
  d["minUniformBufferOffsetAlignment"] = l.minUniformBufferOffsetAlignment;
  d["maxComputeWorkgroupStorageSize"] = l.maxComputeWorkgroupStorageSize;
  d["maxComputeInvocationsPerWorkgroup"] = l.maxComputeInvocationsPerWorkgroup;
  d["maxComputeWorkgroupSizeX"] = l.maxComputeWorkgroupSizeX;
  d["maxComputeWorkgroupsPerDimension"] = l.maxComputeWorkgroupsPerDimension;
  d["maxBindGroups"] = l.maxBindGroups;
  d["maxImmediateSize"] = l.maxImmediateSize;
  return d;
}

py::dict adapter_dict(int index, bool create_device) {
  const runtime::AdapterRecord& record = runtime::adapter_record(index);
  py::dict d;
  d["index"] = index;
  d["name"] = record.name;
  d["vendor"] = record.vendor;
  d["architecture"] = record.architecture;
  d["driver"] = record.driver;
  d["backend"] = record.backend;
  d["adapter_type"] = record.adapter_type;
  d["vendor_id"] = record.vendor_id;
  d["device_id"] = record.device_id;
  if (create_device) {
    runtime::DeviceContext& context = runtime::device_context(index);
    d["features"] = context.feature_names();
    d["limits"] = limits_dict(context.limits());
  }
  return d;
}

py::dict memory_stats(int device) {
  const auto stats = runtime::device_allocator().getDeviceStats(static_cast<c10::DeviceIndex>(device));
  py::dict d;
  const char* pools[] = {"all", "small_pool", "large_pool"};
  auto add = [&](const char* name, const c10::CachingDeviceAllocator::StatArray& array) {
    for (size_t i = 0; i < 3; ++i) {
      const std::string prefix = std::string(name) + "." + pools[i] + ".";
      d[(prefix + "current").c_str()] = array[i].current;
      d[(prefix + "peak").c_str()] = array[i].peak;
      d[(prefix + "allocated").c_str()] = array[i].allocated;
      d[(prefix + "freed").c_str()] = array[i].freed;
    }
  };
  add("allocation", stats.allocation);
  add("segment", stats.segment);
  add("active", stats.active);
  add("allocated_bytes", stats.allocated_bytes);
  add("reserved_bytes", stats.reserved_bytes);
  add("active_bytes", stats.active_bytes);
  add("requested_bytes", stats.requested_bytes);
  d["num_alloc_retries"] = stats.num_alloc_retries;
  d["num_ooms"] = stats.num_ooms;
  return d;
}

runtime::CommandStream& stream_of(int device) {
  return runtime::device_context(device).stream();
}

} // namespace
} // namespace torch_dml::python

PYBIND11_MODULE(_C, m) {
  using namespace torch_dml;
  using namespace torch_dml::python;
  m.doc() = "torch_dml's C++ core: WebGPU runtime, kernels and aten registrations";

  g_fallback_error = PyErr_NewExceptionWithDoc(
      "torch_dml.FallbackError",
      "An op without a native dml kernel was called in strict mode (it would run on the CPU fallback).",
      PyExc_NotImplementedError, nullptr);
  m.attr("FallbackError") = py::handle(g_fallback_error);
  aten::set_strict_violation_handler(&raise_fallback_error);
  runtime::register_profiler_stubs();
  const bool kernel_profiling = runtime::register_activity_profiler();
  m.attr("_profiler_kernel_events") = kernel_profiling;

  m.def("_load_wgpu", [](const std::string& path) { webgpu::load(path); });
  m.def("_wgpu_version", [] {
    const uint32_t v = webgpu::wgpu().GetVersion();
    return std::to_string(v >> 24) + "." + std::to_string((v >> 16) & 0xFF) + "." + std::to_string((v >> 8) & 0xFF) +
        "." + std::to_string(v & 0xFF);
  });
  m.def("_wgpu_library", [] { return webgpu::library_path(); });
  m.def("_device_count", [] { return runtime::device_count(); });
  m.def("_enumeration_error", [] { return runtime::AdapterRegistry::get().enumeration_error(); });
  m.def("_device_name", [](int i) { return runtime::adapter_record(i).name; });
  m.def("_adapters", [](bool create_devices) {
    py::list all;
    for (int i = 0; i < runtime::device_count(); ++i) all.append(adapter_dict(i, create_devices));
    return all;
  }, py::arg("create_devices") = true);
  // One device's record, creating only that device (torch.dml.get_device_properties).
  m.def("_adapter", [](int i) { return adapter_dict(i, true); });
  m.def("_has_feature", [](int i, const std::string& name) {
    for (const auto& feature : runtime::device_context(i).feature_names())
      if (feature == name) return true;
    return false;
  });
  m.def("_get_device", [] { return runtime::current_device_index(); });
  m.def("_set_device", [](int i) { runtime::set_current_device_index(i); });
  // Any device, not only dml:0: torch.utils.checkpoint stashes RNG states only when this says yes.
  m.def("_is_initialized", [] {
    for (int i = 0; i < runtime::device_count(); ++i)
      if (runtime::device_initialized(i)) return true;
    return false;
  });
  // After a fork, WebGPU objects inherited from the parent are unusable: torch marks the child "in bad
  // fork" and _lazy_init refuses instead of handing out a broken device.
  // torch.dml.init(): creates the device now, so a missing driver or a failed device shows up here.
  m.def("_init_device", [](int i) { runtime::device_context(i); });
  m.def("_lazy_init", [] { torch::utils::register_fork_handler_for_device_init(at::kPrivateUse1); });
  m.def("_is_in_bad_fork", [] { return torch::utils::is_device_in_bad_fork(at::kPrivateUse1); });
  m.def("_synchronize", [](int i) {
    py::gil_scoped_release release;
    if (!runtime::device_initialized(i)) return;
    runtime::DeviceContext& context = runtime::device_context(i);
    std::lock_guard<std::recursive_mutex> lock(context.mutex());
    context.stream().synchronize();
  });
  // Kernel timing without torch.profiler, for torches with no PrivateUse1 kernel events (2.11) and for
  // per-kernel breakdowns in the benchmark report: (kernel, start_ns, end_ns, on the device's clock,
  // (workgroups x, y, z)).
  m.def("_start_kernel_timing", [](int i) {
    runtime::DeviceContext& context = runtime::device_context(i);
    std::lock_guard<std::recursive_mutex> lock(context.mutex());
    context.stream().start_timing();
  });
  m.def("_stop_kernel_timing", [](int i) {
    runtime::DeviceContext& context = runtime::device_context(i);
    std::vector<runtime::DispatchTiming> timings;
    {
      std::lock_guard<std::recursive_mutex> lock(context.mutex());
      context.stream().stop_timing(timings);
    }
    py::list out;
    for (const runtime::DispatchTiming& t : timings)
      out.append(py::make_tuple(t.kernel, t.start_ns, t.end_ns, t.device_clock,
                                py::make_tuple(t.groups[0], t.groups[1], t.groups[2])));
    return out;
  });
  m.def("_spin_wait_us", [](int i) { return runtime::device_context(i).spin_wait_us(); });
  m.def("_stream_counters", [](int i) {
    runtime::CommandStream& stream = stream_of(i);
    return py::make_tuple(stream.dispatch_count(), stream.submit_count());
  });
  m.def("_fail_next_map", [](int i) { runtime::fail_next_staging_map(i); });
  m.def("_wait_count", [](int i) { return stream_of(i).wait_count(); });
  m.def("_pending_device_checks", [](int i) { return stream_of(i).checks().pending(); });
  m.def("_fail_next_upload_map", [](int i) { stream_of(i).fail_next_upload_map(); });
  m.def("_launch_wgsl", &aten::launch_wgsl);
  m.def("_generated_launches", [] { return kernels::generated_launch_count(); });
  m.def("_bind_groups_created", [](int i) { return stream_of(i).bind_group_count(); });
  m.def("_set_wide_tile_groups", [](uint64_t groups) { return kernels::set_wide_tile_groups(groups); });
  m.def("_wide_tile_groups", [](int i) { return kernels::wide_tile_groups(runtime::device_context(i)); });
  m.def("_compiled_kernels", [](int i) { return kernels::compiled_kernel_names(runtime::device_context(i)); });
  m.def("_compiled_kernel_source", [](int i, const std::string& name) {
    return kernels::compiled_kernel_source(runtime::device_context(i), name);
  });
  m.def("_memory_stats", &memory_stats);
  m.def("_reset_peak_memory_stats", [](int i) {
    runtime::device_allocator().resetPeakStats(static_cast<c10::DeviceIndex>(i));
  });
  m.def("_reset_accumulated_memory_stats", [](int i) {
    runtime::device_allocator().resetAccumulatedStats(static_cast<c10::DeviceIndex>(i));
  });
  m.def("_memory_info", [](int i) {
    const runtime::DeviceMemory memory = runtime::device_memory(i);
    return py::make_tuple(memory.free, memory.total, memory.total_source, memory.free_source);
  });
  m.def("_vulkan_memory", [](int i) -> py::object {
    const auto memory = runtime::vulkan_memory_of(runtime::device_context(i).adapter());
    if (!memory) return py::none();
    return py::make_tuple(memory->free ? py::cast(*memory->free) : py::none(), memory->total);
  });
  m.def("_empty_cache", [] { runtime::device_allocator().emptyCache(); });
  m.def("_default_generator", [](int i) {
    return py::reinterpret_steal<py::object>(THPGenerator_initDefaultGenerator(runtime::default_generator(i)));
  });
  m.def("_fallback_counts", [] { return aten::fallback_counts(); });
  m.def("_reset_fallback_counts", [] { aten::reset_fallback_counts(); });
  m.def("_set_strict", [](bool enabled) { aten::set_strict(enabled); });
  m.def("_get_strict", [] { return aten::strict(); });
}
