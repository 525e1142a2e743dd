#include "kernels/triangle_kernel.h"

#include <algorithm>

#include "kernels/generated/wgsl_params.h"
#include "kernels/generated/wgsl_sources.h"
#include "kernels/launch.h"

namespace torch_dml::kernels {
namespace {

struct Plan {
  Launch launch;
  wgsl::TriangleParams params;
};

uint32_t log2_of(size_t power_of_two) {
  uint32_t shift = 0;
  while ((size_t{1} << shift) < power_of_two) ++shift;
  return shift;
}

Plan plan(runtime::DeviceContext& context, const TriangleProblem& t) {
  Plan plan{Launch(context, t.lower ? "tril" : "triu", t.src.dtype), {}};
  Launch& launch = plan.launch;
  const size_t size = t.itemsize;
  launch.require(size == 1 || size == 2 || size == 4 || size == 8 || size == 16, "an element size of " +
                     std::to_string(size) + " bytes");
  const uint64_t words = (t.elements * size + 3) / 4;
  launch.require_u32(std::max(words, t.elements) * 4, "bytes");
  launch.require(t.rows < (1ull << 31) && t.cols < (1ull << 31), "a matrix dimension of 2^31 or more");
  wgsl::TriangleParams& p = plan.params;
  p.words = static_cast<uint32_t>(words);
  p.elements = static_cast<uint32_t>(t.elements);
  p.rows = static_cast<uint32_t>(t.rows);
  p.cols = static_cast<uint32_t>(t.cols);
  p.diagonal = static_cast<int32_t>(
      std::clamp<int64_t>(t.diagonal, -static_cast<int64_t>(t.rows), static_cast<int64_t>(t.cols)));
  p.lower = t.lower ? 1 : 0;
  p.lane_shift = size < 4 ? log2_of(4 / size) : 0;
  p.element_shift = size > 4 ? log2_of(size / 4) : 0;
  p.dst_offset = launch.bind(t.dst, words, 4);
  p.src_offset = launch.bind(t.src, words, 4);
  return plan;
}

} // namespace

std::string triangle_unsupported_reason(runtime::DeviceContext& context, const TriangleProblem& problem) {
  return plan(context, problem).launch.reason();
}

void triangle(runtime::DeviceContext& context, const TriangleProblem& problem) {
  Plan plan = kernels::plan(context, problem);
  plan.launch.run(
      "triangle", [] { return render(wgsl::triangle, {{"workgroup_size", std::to_string(kWorkgroupSize)}}); },
      plan.params, groups_for(plan.params.words));
}

} // namespace torch_dml::kernels
