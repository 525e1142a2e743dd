#include "kernels/split_k.h"

#include <algorithm>

namespace torch_dml::kernels {
namespace {

// WebGPU does not say how many compute units an adapter has, so the plan aims at the largest GPUs
// (132 SMs on an H100/H200: a few workgroups each) and costs a small one only the partial tiles' traffic.
constexpr uint64_t kSplitTargetGroups = 512;
// A thread of the second pass reads its slices one after another: few enough that its latency stays
// below the first pass's, with only one thread per output element to hide it.
constexpr uint64_t kMaxSlices = 64;

} // namespace

uint64_t split_k_slices(runtime::DeviceContext& context, const SplitProblem& s) {
  if (s.tiles * 2 > kSplitTargetGroups || s.k < s.min_split_depth) return 1;
  uint64_t slices = std::min({(kSplitTargetGroups + s.tiles - 1) / s.tiles, s.k / s.min_slice_depth, kMaxSlices});
  // The partials are one storage binding (lavapipe: 128 MiB), and slices * batches one dispatch's z.
  const uint64_t binding = context.limits().maxStorageBufferBindingSize;
  const uint64_t slack = context.limits().minStorageBufferOffsetAlignment;
  slices = std::min(slices, binding > slack ? (binding - slack) / s.bytes_per_slice : 0);
  slices = std::min<uint64_t>(slices, context.limits().maxComputeWorkgroupsPerDimension / s.batches);
  return std::max<uint64_t>(slices, 1);
}

} // namespace torch_dml::kernels
