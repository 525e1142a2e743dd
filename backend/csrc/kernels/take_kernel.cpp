#include "kernels/take_kernel.h"

#include "kernels/bit_lanes.h"
#include "kernels/generated/wgsl_params.h"
#include "kernels/generated/wgsl_sources.h"
#include "kernels/launch.h"

namespace torch_dml::kernels {
namespace {

LaunchPlan<wgsl::TakeParams> plan(runtime::DeviceContext& context, const TakeProblem& t) {
  LaunchPlan<wgsl::TakeParams> plan(context, "take", t.src.dtype);
  plan_lanes(plan, BitLanes(t.src.dtype), t.out, t.src, t.index, t.count, t.src_count, t.count);
  return plan;
}

} // namespace

std::string take_unsupported_reason(runtime::DeviceContext& context, const TakeProblem& t) {
  return plan(context, t).reason();
}

void take(runtime::DeviceContext& context, const TakeProblem& t) {
  const LanesVariant variant(t.src.dtype, t.index.dtype);
  auto planned = plan(context, t);
  planned.run("take/" + variant.name(), [&] { return render(wgsl::take, variant.holes()); },
              groups_for(planned.params.words));
}

} // namespace torch_dml::kernels
