// Compiled kernels, cached per device by name: creating a pipeline costs ~6 ms on NVIDIA (wgpu has no
// pipeline cache in the C API), so each distinct kernel is compiled once per process.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "runtime/device.h"

namespace torch_dml::kernels {

// Returns the pipeline cached under `name` on this device, compiling `make_source()` the first time.
// Modules are created "trusted" with bounds checks kept: the default path adds naga's loop bounding,
// which makes loop-heavy kernels 10-20x slower on NVIDIA. A compile failure throws with naga's
// diagnostics and the kernel name. `entry` names the entry point (a .wgsl file may hold several).
WGPUComputePipeline pipeline(runtime::DeviceContext& context, const std::string& name, uint32_t storage_count,
                             const std::function<std::string()>& make_source, const char* entry = "main");

// A kernel identified without building its name: the family's address (any object unique to it, such
// as an op table row) and its variant packed into 64 bits.
struct PipelineKey {
  const void* family;
  uint64_t code;
  bool operator==(const PipelineKey& other) const { return family == other.family && code == other.code; }
};

// The compiled pipeline under `key`, or nullptr; the caller holds the device lock.
WGPUComputePipeline find_pipeline(runtime::DeviceContext& context, const PipelineKey& key);
void remember_pipeline(runtime::DeviceContext& context, const PipelineKey& key, WGPUComputePipeline compiled);

// The same cache, looked up by key first, for kernels launched often enough that building their name
// per dispatch would show: `make_name` and `make_source` run only the first time. The caller holds the
// device lock.
template <typename MakeName, typename MakeSource>
WGPUComputePipeline pipeline(runtime::DeviceContext& context, const PipelineKey& key, uint32_t storage_count,
                             MakeName&& make_name, MakeSource&& make_source) {
  if (WGPUComputePipeline found = find_pipeline(context, key)) return found;
  WGPUComputePipeline compiled = pipeline(context, make_name(), storage_count, make_source);
  remember_pipeline(context, key, compiled);
  return compiled;
}

// Names of the kernels compiled so far on a device, sorted (tests check which variant ran).
std::vector<std::string> compiled_kernel_names(runtime::DeviceContext& context);

// The WGSL a compiled kernel was built from (tests check it for constructs whose meaning is the
// driver's choice).
std::string compiled_kernel_source(runtime::DeviceContext& context, const std::string& name);

} // namespace torch_dml::kernels
