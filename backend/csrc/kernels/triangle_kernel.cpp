#include "kernels/triangle_kernel.h"

#include <algorithm>

#include "kernels/generated/wgsl_params.h"
#include "kernels/generated/wgsl_sources.h"
#include "kernels/launch.h"

namespace torch_dml::kernels {
namespace {

using Plan = LaunchPlan<wgsl::TriangleParams>;

uint32_t log2_of(size_t power_of_two) {
  uint32_t shift = 0;
  while ((size_t{1} << shift) < power_of_two) ++shift;
  return shift;
}

// Words per dispatch: the slice of src and dst one storage binding holds.
uint64_t words_per_slice(runtime::DeviceContext& context) {
  const WGPULimits& limits = context.limits();
  return (limits.maxStorageBufferBindingSize - limits.minStorageBufferOffsetAlignment - 4) / 4;
}

uint64_t total_words(const TriangleProblem& t) {
  return (t.elements * t.itemsize + 3) / 4;
}

Plan plan(runtime::DeviceContext& context, const TriangleProblem& t, uint64_t first_word, uint64_t words) {
  Plan plan(context, t.lower ? "tril" : "triu", t.src.dtype);
  Launch& launch = plan.launch;
  const size_t size = t.itemsize;
  launch.require(size == 1 || size == 2 || size == 4 || size == 8 || size == 16, "an element size of " +
                     std::to_string(size) + " bytes");
  launch.require_u32(std::max(total_words(t), t.elements) * 4, "bytes");
  launch.require(t.rows < (1ull << 31) && t.cols < (1ull << 31), "a matrix dimension of 2^31 or more");
  wgsl::TriangleParams& p = plan.params;
  p.words = static_cast<uint32_t>(words);
  p.word_base = static_cast<uint32_t>(first_word);
  p.elements = static_cast<uint32_t>(t.elements);
  p.rows = static_cast<uint32_t>(t.rows);
  p.cols = static_cast<uint32_t>(t.cols);
  p.diagonal = static_cast<int32_t>(
      std::clamp<int64_t>(t.diagonal, -static_cast<int64_t>(t.rows), static_cast<int64_t>(t.cols)));
  p.lower = t.lower ? 1 : 0;
  p.lane_shift = size < 4 ? log2_of(4 / size) : 0;
  p.element_shift = size > 4 ? log2_of(size / 4) : 0;
  DeviceTensorRef dst = t.dst, src = t.src;
  dst.element_offset += first_word;
  src.element_offset += first_word;
  p.dst_offset = launch.bind(dst, words, 4);
  p.src_offset = launch.bind(src, words, 4);
  return plan;
}

} // namespace

std::string triangle_unsupported_reason(runtime::DeviceContext& context, const TriangleProblem& problem) {
  return plan(context, problem, 0, std::min(total_words(problem), words_per_slice(context))).launch.reason();
}

void triangle(runtime::DeviceContext& context, const TriangleProblem& problem) {
  const uint64_t words = total_words(problem), step = words_per_slice(context);
  for (uint64_t first = 0; first < words; first += step) {
    Plan plan = kernels::plan(context, problem, first, std::min(step, words - first));
    plan.launch.run(
        "triangle", [] { return render(wgsl::triangle, {{"workgroup_size", std::to_string(kWorkgroupSize)}}); },
        plan.params, groups_for(plan.params.words));
  }
}

} // namespace torch_dml::kernels
