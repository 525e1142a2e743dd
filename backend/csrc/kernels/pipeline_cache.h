// Compiled kernels, cached per device by name: creating a pipeline costs ~6 ms on NVIDIA (wgpu has no
// pipeline cache in the C API), so each distinct kernel is compiled once per process.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "runtime/device.h"

namespace torch_dml::kernels {

// Returns the pipeline cached under `name` on this device, compiling `make_source()` the first time.
// Modules are created "trusted" with bounds checks kept: the default path adds naga's loop bounding,
// which makes loop-heavy kernels 10-20x slower on NVIDIA. A compile failure throws with naga's
// diagnostics and the kernel name.
WGPUComputePipeline pipeline(runtime::DeviceContext& context, const std::string& name, uint32_t storage_count,
                             const std::function<std::string()>& make_source);

// Names of the kernels compiled so far on a device, sorted (tests check which variant ran).
std::vector<std::string> compiled_kernel_names(runtime::DeviceContext& context);

} // namespace torch_dml::kernels
