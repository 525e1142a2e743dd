#include "kernels/put_kernel.h"

#include <limits>

#include "kernels/bit_lanes.h"
#include "kernels/generated/wgsl_params.h"
#include "kernels/generated/wgsl_sources.h"
#include "kernels/launch.h"

namespace torch_dml::kernels {
namespace {

LaunchPlan<wgsl::PutParams> plan(runtime::DeviceContext& context, const PutProblem& t) {
  LaunchPlan<wgsl::PutParams> plan(context, "index_put", t.out.dtype);
  Launch& launch = plan.launch;
  const BitLanes lanes(t.out.dtype);
  launch.require(lanes.supported, "an element size other than 1, 2, 4 or 8 bytes");
  launch.require(t.out.dtype == t.src.dtype, "out and src of different dtypes");
  launch.require(t.winner.dtype == c10::kInt, "a winner buffer that is not int32");
  launch.require(t.index.dtype == c10::kInt || (t.index.dtype == c10::kLong && context.has(runtime::Feature::ShaderInt64)),
                 "indices that are not int32, or int64 without shader-int64");
  // The winner of a position is a source number held in an i32.
  launch.require(t.sources <= static_cast<uint64_t>(std::numeric_limits<int32_t>::max()), "2^31 or more sources");
  const uint64_t words = lanes.words(t.count);
  launch.require_u32(words, "output words");
  launch.require_u32(lanes.source_units(t.sources), "source elements");
  wgsl::PutParams& p = plan.params;
  p.count = static_cast<uint32_t>(t.count);
  p.words = static_cast<uint32_t>(words);
  p.sources = static_cast<uint32_t>(t.sources);
  p.out_offset = launch.bind(t.out, t.count);
  p.src_offset = launch.bind(t.src, t.sources);
  p.index_offset = launch.bind(t.index, t.sources);
  p.winner_offset = launch.bind(t.winner, t.count);
  launch.require(lanes.word_aligned(p.out_offset), "an output that does not start on a word");
  return plan;
}

} // namespace

std::string put_unsupported_reason(runtime::DeviceContext& context, const PutProblem& t) {
  return plan(context, t).reason();
}

void put(runtime::DeviceContext& context, const PutProblem& t) {
  if (t.count == 0 || t.sources == 0) return;
  auto planned = plan(context, t);
  const BitLanes lanes(t.out.dtype);
  const char* index_type = t.index.dtype == c10::kLong ? "i64" : "i32";
  const std::string variant = lanes.name() + "/" + index_type;
  const auto source = [&] { return render(wgsl::put, lanes_holes(lanes, index_type)); };
  planned.run("put/claim/" + variant, source, groups_for(planned.params.sources), "claim");
  planned.run("put/put/" + variant, source, groups_for(planned.params.words), "put");
}

} // namespace torch_dml::kernels
