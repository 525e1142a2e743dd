#include "kernels/pipeline_cache.h"

#include <c10/util/Exception.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <unordered_map>

#include "runtime/stream.h"
#include "webgpu/error_scope.h"

namespace torch_dml::kernels {
namespace {

using webgpu::wgpu;

struct KeyHash {
  size_t operator()(const PipelineKey& k) const {
    return std::hash<uint64_t>()(k.code ^ (reinterpret_cast<uintptr_t>(k.family) * 0x9E3779B97F4A7C15ull));
  }
};

// One device's kernels: by name (they own the pipelines), and by packed key in front of that.
struct Cache {
  std::unordered_map<std::string, webgpu::ComputePipeline> by_name;
  std::unordered_map<PipelineKey, WGPUComputePipeline, KeyHash> by_key;
  // The WGSL each kernel was compiled from, for tests that read what a driver is handed (a few KB
  // per kernel, a few hundred kernels in a long process).
  std::unordered_map<std::string, std::string> sources;
};

constexpr int kMaxDevices = 64;

// Read on every dispatch without a global lock: a device's slot is filled once, under `guard`, and
// never freed (pipelines outlive static destruction order); its maps are used under the device lock.
Cache& cache_for(int device) {
  TORCH_CHECK(device >= 0 && device < kMaxDevices, "torch_dml: device index ", device, " beyond ", kMaxDevices);
  static std::atomic<Cache*> slots[kMaxDevices];
  Cache* cache = slots[device].load(std::memory_order_acquire);
  if (cache) return *cache;
  static std::mutex guard;
  std::lock_guard<std::mutex> lock(guard);
  cache = slots[device].load(std::memory_order_relaxed);
  if (!cache) {
    cache = new Cache();
    slots[device].store(cache, std::memory_order_release);
  }
  return *cache;
}

} // namespace

WGPUComputePipeline pipeline(runtime::DeviceContext& context, const std::string& name, uint32_t storage_count,
                             const std::function<std::string()>& make_source, const char* entry) {
  std::lock_guard<std::recursive_mutex> lock(context.mutex());
  Cache& cache = cache_for(context.index());
  auto found = cache.by_name.find(name);
  if (found != cache.by_name.end()) return found->second.get();

  const std::string source = make_source();
  WGPUShaderSourceWGSL wgsl = WGPU_SHADER_SOURCE_WGSL_INIT;
  wgsl.code = WGPUStringView{source.data(), source.size()};
  WGPUShaderModuleDescriptor module_descriptor = WGPU_SHADER_MODULE_DESCRIPTOR_INIT;
  module_descriptor.nextInChain = &wgsl.chain;
  module_descriptor.label = webgpu::view(name.c_str());

  webgpu::ErrorScope scope(context.device());
  webgpu::ShaderModule module(
      wgpu().DeviceCreateShaderModuleTrusted(context.device(), &module_descriptor, WGPUShaderRuntimeChecks_BoundsChecks));
  WGPUComputePipelineDescriptor descriptor = WGPU_COMPUTE_PIPELINE_DESCRIPTOR_INIT;
  descriptor.label = webgpu::view(name.c_str());
  descriptor.layout = context.stream().pipeline_layout(storage_count);
  descriptor.compute.module = module.get();
  descriptor.compute.entryPoint = webgpu::view(entry);
  webgpu::ComputePipeline created(wgpu().DeviceCreateComputePipeline(context.device(), &descriptor));
  if (auto error = scope.pop()) {
    TORCH_CHECK(false, "torch_dml: kernel '", name, "' failed to compile on ", context.describe(), ": ",
                error->message, "\n--- WGSL ---\n", source);
  }
  context.check("compiling kernel '" + name + "'");
  WGPUComputePipeline result = created.get();
  context.stream().label_pipeline(result, name);
  cache.by_name.emplace(name, std::move(created));
  cache.sources.emplace(name, source);
  return result;
}

WGPUComputePipeline find_pipeline(runtime::DeviceContext& context, const PipelineKey& key) {
  const auto& by_key = cache_for(context.index()).by_key;
  auto found = by_key.find(key);
  return found == by_key.end() ? nullptr : found->second;
}

void remember_pipeline(runtime::DeviceContext& context, const PipelineKey& key, WGPUComputePipeline compiled) {
  cache_for(context.index()).by_key.emplace(key, compiled);
}

std::vector<std::string> compiled_kernel_names(runtime::DeviceContext& context) {
  std::lock_guard<std::recursive_mutex> lock(context.mutex());
  std::vector<std::string> names;
  for (const auto& [name, compiled] : cache_for(context.index()).by_name) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

std::string compiled_kernel_source(runtime::DeviceContext& context, const std::string& name) {
  std::lock_guard<std::recursive_mutex> lock(context.mutex());
  const auto& sources = cache_for(context.index()).sources;
  auto found = sources.find(name);
  TORCH_CHECK(found != sources.end(), "torch_dml: no kernel named '", name, "' was compiled on ", context.describe());
  return found->second;
}

} // namespace torch_dml::kernels
