#include "runtime/adapters.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <exception>
#include <sstream>

namespace torch_dml::runtime {
namespace {

using webgpu::wgpu;

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

const char* backend_name(WGPUBackendType type) {
  switch (type) {
    case WGPUBackendType_D3D12: return "D3D12";
    case WGPUBackendType_D3D11: return "D3D11";
    case WGPUBackendType_Metal: return "Metal";
    case WGPUBackendType_Vulkan: return "Vulkan";
    case WGPUBackendType_OpenGL: return "OpenGL";
    case WGPUBackendType_OpenGLES: return "OpenGLES";
    default: return "unknown";
  }
}

const char* type_name(WGPUAdapterType type) {
  switch (type) {
    case WGPUAdapterType_DiscreteGPU: return "discrete";
    case WGPUAdapterType_IntegratedGPU: return "integrated";
    case WGPUAdapterType_CPU: return "cpu";
    default: return "unknown";
  }
}

int type_rank(const std::string& type) {
  if (type == "discrete") return 0;
  if (type == "integrated") return 1;
  if (type == "unknown") return 2;
  return 3; // cpu / software last
}

// The API each OS drives best; a GPU reachable through two APIs is kept once, through this one.
int backend_rank(const std::string& backend) {
#if defined(_WIN32)
  const char* order[] = {"D3D12", "Vulkan", "Metal"};
#elif defined(__APPLE__)
  const char* order[] = {"Metal", "Vulkan", "D3D12"};
#else
  const char* order[] = {"Vulkan", "D3D12", "Metal"};
#endif
  for (int i = 0; i < 3; ++i)
    if (backend == order[i]) return i;
  return 3;
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  std::string part;
  while (std::getline(stream, part, sep)) {
    part.erase(0, part.find_first_not_of(" \t"));
    part.erase(part.find_last_not_of(" \t") + 1);
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

// TORCH_DML_ADAPTERS: comma-separated entries, each an index into the default ordering or a
// case-insensitive substring of the adapter name or backend; the device indices follow the entries.
std::vector<AdapterRecord> apply_selection(std::vector<AdapterRecord> all, const char* selection) {
  if (!selection || !*selection) return all;
  std::vector<bool> taken(all.size(), false);
  std::vector<AdapterRecord> chosen;
  for (const auto& entry : split(selection, ',')) {
    const bool numeric = std::all_of(entry.begin(), entry.end(), [](unsigned char c) { return std::isdigit(c); });
    for (size_t i = 0; i < all.size(); ++i) {
      if (taken[i]) continue;
      const bool match = numeric
          ? std::stoul(entry) == i
          : lower(all[i].name + " " + all[i].backend).find(lower(entry)) != std::string::npos;
      if (match) {
        taken[i] = true;
        chosen.push_back(std::move(all[i]));
        if (numeric) break;
      }
    }
  }
  return chosen;
}

} // namespace

AdapterRegistry& AdapterRegistry::get() {
  static AdapterRegistry registry;
  return registry;
}

AdapterRegistry::AdapterRegistry() {
  try {
    WGPUInstanceExtras extras = {};
    extras.chain.sType = static_cast<WGPUSType>(WGPUSType_InstanceExtras);
    // GL is left out: it would list the same GPUs a second time, with fewer features.
    extras.backends = WGPUInstanceBackend_Vulkan | WGPUInstanceBackend_Metal | WGPUInstanceBackend_DX12;
    extras.flags = 0;
    WGPUInstanceDescriptor descriptor = WGPU_INSTANCE_DESCRIPTOR_INIT;
    descriptor.nextInChain = &extras.chain;
    instance_ = webgpu::Instance(wgpu().CreateInstance(&descriptor));
    if (!instance_) {
      error_ = "wgpuCreateInstance returned no instance";
      return;
    }
    const size_t count = wgpu().InstanceEnumerateAdapters(instance_.get(), nullptr, nullptr);
    std::vector<WGPUAdapter> raw(count, nullptr);
    if (count) wgpu().InstanceEnumerateAdapters(instance_.get(), nullptr, raw.data());

    std::vector<AdapterRecord> found;
    for (WGPUAdapter handle : raw) {
      AdapterRecord record;
      record.adapter = webgpu::Adapter(handle);
      WGPUAdapterInfo info = WGPU_ADAPTER_INFO_INIT;
      wgpu().AdapterGetInfo(handle, &info);
      record.name = webgpu::to_string(info.device);
      record.vendor = webgpu::to_string(info.vendor);
      record.architecture = webgpu::to_string(info.architecture);
      record.driver = webgpu::to_string(info.description);
      record.backend = backend_name(info.backendType);
      record.adapter_type = type_name(info.adapterType);
      record.vendor_id = info.vendorID;
      record.device_id = info.deviceID;
      wgpu().AdapterInfoFreeMembers(info);
      if (record.name.empty()) record.name = record.vendor.empty() ? "unknown adapter" : record.vendor;
      found.push_back(std::move(record));
    }
    std::stable_sort(found.begin(), found.end(), [](const AdapterRecord& a, const AdapterRecord& b) {
      const int ta = type_rank(a.adapter_type), tb = type_rank(b.adapter_type);
      if (ta != tb) return ta < tb;
      return backend_rank(a.backend) < backend_rank(b.backend);
    });
    std::vector<AdapterRecord> unique;
    for (auto& record : found) {
      const bool seen = std::any_of(unique.begin(), unique.end(), [&](const AdapterRecord& kept) {
        return kept.vendor_id == record.vendor_id && kept.device_id == record.device_id &&
            kept.name == record.name;
      });
      if (!seen) unique.push_back(std::move(record));
    }
    adapters_ = apply_selection(std::move(unique), std::getenv("TORCH_DML_ADAPTERS"));
  } catch (const std::exception& error) {
    error_ = error.what();
    adapters_.clear();
  }
}

} // namespace torch_dml::runtime
