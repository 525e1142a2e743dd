#include "kernels/pipeline_cache.h"

#include <c10/util/Exception.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "runtime/stream.h"
#include "webgpu/error_scope.h"

namespace torch_dml::kernels {
namespace {

using webgpu::wgpu;

using Cache = std::unordered_map<std::string, webgpu::ComputePipeline>;

Cache& cache_for(int device) {
  static auto* caches = new std::map<int, Cache>(); // leaked: pipelines outlive static destruction order
  return (*caches)[device];
}

} // namespace

WGPUComputePipeline pipeline(runtime::DeviceContext& context, const std::string& name, uint32_t storage_count,
                             const std::function<std::string()>& make_source) {
  std::lock_guard<std::recursive_mutex> lock(context.mutex());
  Cache& cache = cache_for(context.index());
  auto found = cache.find(name);
  if (found != cache.end()) return found->second.get();

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
  descriptor.compute.entryPoint = webgpu::view("main");
  webgpu::ComputePipeline created(wgpu().DeviceCreateComputePipeline(context.device(), &descriptor));
  if (auto error = scope.pop()) {
    TORCH_CHECK(false, "torch_dml: kernel '", name, "' failed to compile on ", context.describe(), ": ",
                error->message, "\n--- WGSL ---\n", source);
  }
  context.check("compiling kernel '" + name + "'");
  WGPUComputePipeline result = created.get();
  cache.emplace(name, std::move(created));
  return result;
}

std::vector<std::string> compiled_kernel_names(runtime::DeviceContext& context) {
  std::lock_guard<std::recursive_mutex> lock(context.mutex());
  std::vector<std::string> names;
  for (const auto& [name, compiled] : cache_for(context.index())) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

} // namespace torch_dml::kernels
