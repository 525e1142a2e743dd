#include "kernels/take_kernel.h"

#include "kernels/bit_lanes.h"
#include "kernels/generated/wgsl_params.h"
#include "kernels/generated/wgsl_sources.h"
#include "kernels/launch.h"

namespace torch_dml::kernels {
namespace {

struct Plan {
  Launch launch;
  wgsl::TakeParams params;
  BitLanes lanes;
};

Plan plan(runtime::DeviceContext& context, const TakeProblem& t) {
  Plan plan{Launch(context, "take", t.src.dtype), {}, BitLanes(t.src.dtype)};
  Launch& launch = plan.launch;
  const BitLanes& lanes = plan.lanes;
  launch.require(lanes.supported, "an element size other than 1, 2, 4 or 8 bytes");
  launch.require(t.out.dtype == t.src.dtype, "out and src of different dtypes");
  launch.require(t.index.dtype == c10::kInt || (t.index.dtype == c10::kLong && context.has(runtime::Feature::ShaderInt64)),
                 "indices that are not int32, or int64 without shader-int64");
  const uint64_t words = lanes.words(t.count);
  launch.require_u32(words, "output words");
  launch.require_u32(lanes.source_units(t.src_count), "source elements");
  wgsl::TakeParams& p = plan.params;
  p.count = static_cast<uint32_t>(t.count);
  p.words = static_cast<uint32_t>(words);
  p.out_offset = launch.bind(t.out, t.count);
  p.src_offset = launch.bind(t.src, t.src_count);
  p.index_offset = launch.bind(t.index, t.count);
  launch.require(lanes.word_aligned(p.out_offset), "an output that does not start on a word");
  return plan;
}

} // namespace

std::string take_unsupported_reason(runtime::DeviceContext& context, const TakeProblem& t) {
  return plan(context, t).launch.reason();
}

void take(runtime::DeviceContext& context, const TakeProblem& t) {
  Plan plan = kernels::plan(context, t);
  const char* index_type = t.index.dtype == c10::kLong ? "i64" : "i32";
  const std::string name = "take/" + plan.lanes.name() +
      "/" + index_type;
  plan.launch.run(
      name,
      [&] {
        return render(wgsl::take, {{"index_type", index_type},
                                   {"lanes_log2", std::to_string(plan.lanes.lanes_log2)},
                                   {"wide", plan.lanes.wide ? "true" : "false"},
                                   {"workgroup_size", std::to_string(kWorkgroupSize)}});
      },
      plan.params, groups_for(plan.params.words));
}

} // namespace torch_dml::kernels
