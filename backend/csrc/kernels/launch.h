// The one path from a kernel to the GPU. A kernel describes a launch: the operands it binds (each
// through a window that starts just below its first element, so indices in WGSL stay 32-bit wherever
// the tensor lives in a large buffer), the conditions under which it can run natively, its compiled
// variant (cached per device by name) and a flat count of workgroups (laid out as a 2-D grid, since
// one dimension holds at most 65535). A launch that cannot run says why, for the op's fallback rule
// and for the error a strict run raises.
//
// WGSL side: operands are `var<storage, read_write>` at bindings 0..n-1 in the order bound, Params
// the uniform block at binding n; lib/grid.wgsl turns the 2-D grid back into flat indices.
#pragma once

#include <c10/core/ScalarType.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "kernels/pipeline_cache.h"
#include "kernels/tensor_ref.h"
#include "runtime/device.h"
#include "runtime/stream.h"

namespace torch_dml::kernels {

// Threads per workgroup of the one-thread-per-element and one-workgroup-per-row kernels: a multiple
// of every vendor's subgroup width (4 to 128), and the minimum maxComputeInvocationsPerWorkgroup.
constexpr uint32_t kWorkgroupSize = 256;

class Launch {
 public:
  // Multi-tensor launches (kernels/tensor_slots.h) bind several tensors' operands; the adapter's
  // maxStorageBuffersPerShaderStage may allow fewer, which those launches ask for first.
  static constexpr uint32_t kMaxOperands = runtime::kMaxStorageBindings;

  // `op` and `dtype` name the launch in errors ("softmax of Half cannot run on <adapter>: ...").
  Launch(runtime::DeviceContext& context, std::string_view op, c10::ScalarType dtype);

  // Binds `count` elements of `t` from its element_offset, counted in units of `itemsize` bytes (the
  // dtype's size when 0), at the next binding: call it in the order of the shader's @binding numbers. Returns the index of that first element within the
  // bound window, the offset the kernel adds to its indices.
  uint32_t bind(const DeviceTensorRef& t, uint64_t count, uint64_t itemsize = 0);

  // Binds a buffer range that is no tensor (the device's check record) at the next binding.
  void bind_buffer(const runtime::StorageBinding& range);

  // The buffer range bind() chose for operand `i`: a kernel that loads several elements at once picks
  // its variant by the alignment of `.offset`.
  const runtime::StorageBinding& binding(uint32_t i) const { return bindings_[i]; }

  // Records `why` as the reason the launch cannot run unless `ok` (the first reason is kept).
  void require(bool ok, std::string_view why);
  // Counts the kernel indexes with u32 must stay below 2^32.
  void require_u32(uint64_t count, std::string_view what);

  bool ok() const { return reason_.empty(); }
  const std::string& reason() const { return reason_; }

  runtime::DeviceContext& context() const { return context_; }

  // Compiles `make_source()` under `kernel` the first time (entry point `entry`: the name must tell
  // entry points apart), then dispatches `groups` workgroups with `params` as the uniform block.
  // Throws the recorded reason when the launch cannot run.
  template <typename P>
  void run(const std::string& kernel, const std::function<std::string()>& make_source, const P& params,
           uint64_t groups, const char* entry = "main") {
    dispatch(kernel, make_source, &params, sizeof(P), groups, entry);
  }

  // As run(), for kernels dispatched often enough that building their name per dispatch would show:
  // the pipeline is looked up by `key`, and `make_name` and `make_source` run only the first time.
  template <typename P, typename MakeName, typename MakeSource>
  void run(const PipelineKey& key, MakeName&& make_name, MakeSource&& make_source, const P& params, uint64_t groups) {
    check();
    if (groups == 0) return;
    record(pipeline(context_, key, count_, make_name, make_source), &params, sizeof(P), groups);
  }

  // As run(), with the workgroups given as a 3-D grid the kernel reads itself (GEMM: tiles x batches).
  template <typename P>
  void run3d(const std::string& kernel, const std::function<std::string()>& make_source, const P& params,
             uint32_t groups_x, uint32_t groups_y, uint32_t groups_z, const char* entry = "main") {
    dispatch3d(kernel, make_source, &params, sizeof(P), groups_x, groups_y, groups_z, entry);
  }

 private:
  void check() const;
  void record(WGPUComputePipeline compiled, const void* params, size_t params_size, uint64_t groups);
  void dispatch(const std::string& kernel, const std::function<std::string()>& make_source, const void* params,
                size_t params_size, uint64_t groups, const char* entry);
  void dispatch3d(const std::string& kernel, const std::function<std::string()>& make_source, const void* params,
                  size_t params_size, uint32_t groups_x, uint32_t groups_y, uint32_t groups_z, const char* entry);

  runtime::DeviceContext& context_;
  std::string_view op_;
  c10::ScalarType dtype_;
  std::string reason_;
  uint32_t count_ = 0;
  runtime::StorageBinding bindings_[kMaxOperands] = {};
};

// A kernel's launch with its uniform block: what its plan builds from a problem, binding operands and
// recording why it cannot run, so that the kernel's unsupported_reason and its run are one code path.
template <typename P>
struct LaunchPlan {
  LaunchPlan(runtime::DeviceContext& context, std::string_view op, c10::ScalarType dtype) : launch(context, op, dtype) {}

  const std::string& reason() const { return launch.reason(); }

  // Launch::run with these params.
  void run(const std::string& kernel, const std::function<std::string()>& make_source, uint64_t groups,
           const char* entry = "main") {
    launch.run(kernel, make_source, params, groups, entry);
  }

  // Launch::run3d with these params.
  void run3d(const std::string& kernel, const std::function<std::string()>& make_source, uint32_t groups_x,
             uint32_t groups_y, uint32_t groups_z, const char* entry = "main") {
    launch.run3d(kernel, make_source, params, groups_x, groups_y, groups_z, entry);
  }

  Launch launch;
  P params{};
};

// Whether `count` elements of `t` from its element_offset (in units of `itemsize` bytes, the dtype's
// size when 0) fit one storage binding, with indices in the window below 2^32: what bind() checks, for a
// plan deciding how to split its work before it binds anything.
bool fits_one_binding(runtime::DeviceContext& context, const DeviceTensorRef& t, uint64_t count,
                      uint64_t itemsize = 0);

// Enumerator `value`'s entry in `names`, listed in the enum's order from 0 ("?" past them): a kernel's
// op and entry-point names as a table beside its enum, not a switch per kernel.
template <typename Enum, size_t N>
constexpr const char* name_of(Enum value, const char* const (&names)[N]) {
  const auto i = static_cast<size_t>(value);
  return i < N ? names[i] : "?";
}

// Workgroups for `threads` threads of kWorkgroupSize.
inline uint64_t groups_for(uint64_t threads) {
  return (threads + kWorkgroupSize - 1) / kWorkgroupSize;
}

} // namespace torch_dml::kernels
