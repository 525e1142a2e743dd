// RAII ownership of WebGPU objects: one reference each, released through the proc table.
#pragma once

#include <utility>

#include "webgpu/procs.h"

namespace torch_dml::webgpu {

template <typename T, auto Procs::*Release>
class Handle {
 public:
  Handle() = default;
  explicit Handle(T raw) : raw_(raw) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& other) noexcept : raw_(std::exchange(other.raw_, nullptr)) {}
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      reset();
      raw_ = std::exchange(other.raw_, nullptr);
    }
    return *this;
  }
  ~Handle() { reset(); }

  void reset() {
    if (raw_) (wgpu().*Release)(raw_);
    raw_ = nullptr;
  }
  T get() const { return raw_; }
  T release() { return std::exchange(raw_, nullptr); }
  explicit operator bool() const { return raw_ != nullptr; }

 private:
  T raw_ = nullptr;
};

using Instance = Handle<WGPUInstance, &Procs::InstanceRelease>;
using Adapter = Handle<WGPUAdapter, &Procs::AdapterRelease>;
using Device = Handle<WGPUDevice, &Procs::DeviceRelease>;
using Queue = Handle<WGPUQueue, &Procs::QueueRelease>;
using Buffer = Handle<WGPUBuffer, &Procs::BufferRelease>;
using ShaderModule = Handle<WGPUShaderModule, &Procs::ShaderModuleRelease>;
using BindGroupLayout = Handle<WGPUBindGroupLayout, &Procs::BindGroupLayoutRelease>;
using PipelineLayout = Handle<WGPUPipelineLayout, &Procs::PipelineLayoutRelease>;
using ComputePipeline = Handle<WGPUComputePipeline, &Procs::ComputePipelineRelease>;
using BindGroup = Handle<WGPUBindGroup, &Procs::BindGroupRelease>;
using CommandEncoder = Handle<WGPUCommandEncoder, &Procs::CommandEncoderRelease>;
using CommandBuffer = Handle<WGPUCommandBuffer, &Procs::CommandBufferRelease>;
using ComputePass = Handle<WGPUComputePassEncoder, &Procs::ComputePassEncoderRelease>;
using QuerySet = Handle<WGPUQuerySet, &Procs::QuerySetRelease>;

} // namespace torch_dml::webgpu
