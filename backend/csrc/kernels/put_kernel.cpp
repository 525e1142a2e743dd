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
  plan_lanes(plan, BitLanes(t.out.dtype), t.out, t.src, t.index, t.count, t.sources, t.sources);
  Launch& launch = plan.launch;
  launch.require(t.winner.dtype == c10::kInt, "a winner buffer that is not int32");
  // The winner of a position is a source number held in an i32.
  launch.require(t.sources <= static_cast<uint64_t>(std::numeric_limits<int32_t>::max()), "2^31 or more sources");
  plan.params.sources = static_cast<uint32_t>(t.sources);
  plan.params.winner_offset = launch.bind(t.winner, t.count);
  return plan;
}

} // namespace

std::string put_unsupported_reason(runtime::DeviceContext& context, const PutProblem& t) {
  return plan(context, t).reason();
}

void put(runtime::DeviceContext& context, const PutProblem& t) {
  if (t.count == 0 || t.sources == 0) return;
  const LanesVariant variant(t.out.dtype, t.index.dtype);
  const auto source = [&] { return render(wgsl::put, variant.holes()); };
  auto planned = plan(context, t);
  planned.run("put/claim/" + variant.name(), source, groups_for(planned.params.sources), "claim");
  planned.run("put/put/" + variant.name(), source, groups_for(planned.params.words), "put");
}

} // namespace torch_dml::kernels
