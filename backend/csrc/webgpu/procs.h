// The wgpu-native entry points torch_dml calls, resolved at run time from the library inside the
// installed `wgpu` package (no soname, a different file name per OS, so it cannot be linked).
//
// Only functions known to be implemented are listed: several declared in webgpu.h abort the process in
// wgpu-native 29 (WaitAny, *Async pipelines, GetCompilationInfo, *SetLabel, Read/WriteMappedRange, ...).
#pragma once

#include <string>

#include <webgpu.h>
#include <wgpu.h>

namespace torch_dml::webgpu {

#define TORCH_DML_WGPU_PROCS(X)            \
  X(GetVersion)                            \
  X(CreateInstance)                        \
  X(InstanceRelease)                       \
  X(InstanceEnumerateAdapters)             \
  X(InstanceProcessEvents)                 \
  X(AdapterGetInfo)                        \
  X(AdapterInfoFreeMembers)                \
  X(AdapterGetLimits)                      \
  X(AdapterHasFeature)                     \
  X(AdapterGetFeatures)                    \
  X(SupportedFeaturesFreeMembers)          \
  X(AdapterRequestDevice)                  \
  X(AdapterRelease)                        \
  X(DeviceGetLimits)                       \
  X(DeviceGetQueue)                        \
  X(DevicePoll)                            \
  X(DevicePushErrorScope)                  \
  X(DevicePopErrorScope)                   \
  X(DeviceRelease)                         \
  X(DeviceCreateBuffer)                    \
  X(DeviceCreateShaderModuleTrusted)       \
  X(DeviceCreateBindGroupLayout)           \
  X(DeviceCreatePipelineLayout)            \
  X(DeviceCreateComputePipeline)           \
  X(DeviceCreateBindGroup)                 \
  X(DeviceCreateCommandEncoder)            \
  X(DeviceCreateQuerySet)                  \
  X(BufferRelease)                         \
  X(BufferDestroy)                         \
  X(BufferMapAsync)                        \
  X(BufferGetConstMappedRange)             \
  X(BufferGetMappedRange)                  \
  X(BufferUnmap)                           \
  X(ShaderModuleRelease)                   \
  X(BindGroupLayoutRelease)                \
  X(PipelineLayoutRelease)                 \
  X(ComputePipelineRelease)                \
  X(BindGroupRelease)                      \
  X(CommandEncoderBeginComputePass)        \
  X(CommandEncoderCopyBufferToBuffer)      \
  X(CommandEncoderResolveQuerySet)         \
  X(CommandEncoderWriteTimestamp)          \
  X(CommandEncoderFinish)                  \
  X(CommandEncoderRelease)                 \
  X(CommandBufferRelease)                  \
  X(ComputePassEncoderSetPipeline)         \
  X(ComputePassEncoderSetBindGroup)        \
  X(ComputePassEncoderDispatchWorkgroups)  \
  X(ComputePassEncoderEnd)                 \
  X(ComputePassEncoderRelease)             \
  X(QuerySetRelease)                       \
  X(QueueSubmitForIndex)                   \
  X(QueueWriteBuffer)                      \
  X(QueueGetTimestampPeriod)               \
  X(QueueRelease)                          \
  X(ComputePassEncoderWriteTimestamp)

struct Procs {
#define TORCH_DML_DECLARE_PROC(name) decltype(&wgpu##name) name = nullptr;
  TORCH_DML_WGPU_PROCS(TORCH_DML_DECLARE_PROC)
#undef TORCH_DML_DECLARE_PROC
};

// Loads the library once; throws std::runtime_error naming the path and the missing symbol.
void load(const std::string& library_path);
bool loaded();
const std::string& library_path();

// The proc table; throws if load() has not succeeded.
const Procs& wgpu();

std::string to_string(WGPUStringView view);
inline WGPUStringView view(const char* text) {
  return WGPUStringView{text, WGPU_STRLEN};
}

} // namespace torch_dml::webgpu
