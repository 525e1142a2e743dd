// Enumerates WebGPU adapters once per process and orders them the way users expect device indices:
// discrete GPU, integrated GPU, virtual GPU, CPU/software. TORCH_DML_ADAPTERS selects or limits them.
#pragma once

#include <string>
#include <vector>

#include "webgpu/handle.h"

namespace torch_dml::runtime {

struct AdapterRecord {
  webgpu::Adapter adapter;
  std::string name;          // e.g. "NVIDIA H100 80GB HBM3", "llvmpipe (LLVM 15.0.6, 256 bits)"
  std::string vendor;
  std::string architecture;
  std::string driver;        // the adapter's description string (driver name and version on Vulkan)
  std::string backend;       // "Vulkan", "D3D12", "Metal", ...
  std::string adapter_type;  // "discrete", "integrated", "cpu", ...
  uint32_t vendor_id = 0;
  uint32_t device_id = 0;
};

class AdapterRegistry {
 public:
  // Never throws: a failure to enumerate is recorded and shows as zero devices (the guard's
  // deviceCount() must not throw), with the reason kept for error messages and collect_env.
  static AdapterRegistry& get();

  WGPUInstance instance() const { return instance_.get(); }
  std::vector<AdapterRecord>& adapters() { return adapters_; }
  const std::string& enumeration_error() const { return error_; }

 private:
  AdapterRegistry();
  webgpu::Instance instance_;
  std::vector<AdapterRecord> adapters_;
  std::string error_;
};

} // namespace torch_dml::runtime
