#include "kernels/take_kernel.h"

#include "kernels/bit_lanes.h"
#include "kernels/generated/wgsl_params.h"
#include "kernels/generated/wgsl_sources.h"
#include "kernels/launch.h"

namespace torch_dml::kernels {
namespace {

LaunchPlan<wgsl::TakeParams> plan(runtime::DeviceContext& context, const TakeProblem& t) {
  LaunchPlan<wgsl::TakeParams> plan(context, "take", t.src.dtype);
  Launch& launch = plan.launch;
  const BitLanes lanes(t.src.dtype);
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
  return plan(context, t).reason();
}

void take(runtime::DeviceContext& context, const TakeProblem& t) {
  auto planned = plan(context, t);
  const BitLanes lanes(t.src.dtype);
  const char* index_type = t.index.dtype == c10::kLong ? "i64" : "i32";
  planned.run("take/" + lanes.name() + "/" + index_type,
              [&] { return render(wgsl::take, lanes_holes(lanes, index_type)); }, groups_for(planned.params.words));
}

} // namespace torch_dml::kernels
