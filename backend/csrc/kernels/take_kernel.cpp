#include "kernels/take_kernel.h"

#include "kernels/generated/wgsl_params.h"
#include "kernels/generated/wgsl_sources.h"
#include "kernels/launch.h"

namespace torch_dml::kernels {
namespace {

struct Plan {
  Launch launch;
  wgsl::TakeParams params;
  uint32_t lanes_log2 = 0;
  bool wide = false;
};

Plan plan(runtime::DeviceContext& context, const TakeProblem& t) {
  Plan plan{Launch(context, "take", t.src.dtype), {}};
  Launch& launch = plan.launch;
  const size_t itemsize = c10::elementSize(t.src.dtype);
  plan.wide = itemsize == 8;
  plan.lanes_log2 = itemsize == 1 ? 2 : itemsize == 2 ? 1 : 0;
  launch.require(itemsize == 1 || itemsize == 2 || itemsize == 4 || itemsize == 8,
                 "an element size other than 1, 2, 4 or 8 bytes");
  launch.require(t.out.dtype == t.src.dtype, "out and src of different dtypes");
  launch.require(t.index.dtype == c10::kInt || (t.index.dtype == c10::kLong && context.has(runtime::Feature::ShaderInt64)),
                 "indices that are not int32, or int64 without shader-int64");
  const uint64_t words = plan.wide ? 2 * t.count : (t.count + (1u << plan.lanes_log2) - 1) >> plan.lanes_log2;
  launch.require_u32(words, "output words");
  launch.require_u32(plan.wide ? 2 * t.src_count : t.src_count, "source elements");
  wgsl::TakeParams& p = plan.params;
  p.count = static_cast<uint32_t>(t.count);
  p.words = static_cast<uint32_t>(words);
  p.out_offset = launch.bind(t.out, t.count);
  p.src_offset = launch.bind(t.src, t.src_count);
  p.index_offset = launch.bind(t.index, t.count);
  launch.require((p.out_offset & ((1u << plan.lanes_log2) - 1)) == 0, "an output that does not start on a word");
  return plan;
}

} // namespace

std::string take_unsupported_reason(runtime::DeviceContext& context, const TakeProblem& t) {
  return plan(context, t).launch.reason();
}

void take(runtime::DeviceContext& context, const TakeProblem& t) {
  Plan plan = kernels::plan(context, t);
  const char* index_type = t.index.dtype == c10::kLong ? "i64" : "i32";
  const std::string name = std::string("take/") + (plan.wide ? "b64" : plan.lanes_log2 == 2 ? "b8" : plan.lanes_log2 == 1 ? "b16" : "b32") +
      "/" + index_type;
  plan.launch.run(
      name,
      [&] {
        return render(wgsl::take, {{"index_type", index_type},
                                   {"lanes_log2", std::to_string(plan.lanes_log2)},
                                   {"wide", plan.wide ? "true" : "false"},
                                   {"workgroup_size", std::to_string(kWorkgroupSize)}});
      },
      plan.params, groups_for(plan.params.words));
}

} // namespace torch_dml::kernels
