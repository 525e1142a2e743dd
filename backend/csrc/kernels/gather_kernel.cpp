#include "kernels/gather_kernel.h"

#include "kernels/generated/wgsl_params.h"
#include "kernels/generated/wgsl_sources.h"
#include "kernels/launch.h"

namespace torch_dml::kernels {
namespace {

// Operands are addressed as u32 words: the caller gives out's and self's element_offset in words.
LaunchPlan<wgsl::GatherParams> plan(runtime::DeviceContext& context, const GatherProblem& g) {
  LaunchPlan<wgsl::GatherParams> plan(context, "index_select", g.self.dtype);
  Launch& launch = plan.launch;
  launch.require(g.index.dtype != c10::kLong || context.has(runtime::Feature::ShaderInt64),
                 "int64 indices need shader-int64");
  const uint64_t total = g.outer * g.count * g.row_words;
  launch.require_u32(total, "words");
  launch.require_u32(g.outer * g.source_rows * g.row_words, "words");
  wgsl::GatherParams& p = plan.params;
  p.total_words = static_cast<uint32_t>(total);
  p.row_words = static_cast<uint32_t>(g.row_words);
  p.count = static_cast<uint32_t>(g.count);
  p.source_rows = static_cast<uint32_t>(g.source_rows);
  p.out_offset = launch.bind(g.out, total, 4);
  p.self_offset = launch.bind(g.self, g.outer * g.source_rows * g.row_words, 4);
  p.index_offset = launch.bind(g.index, g.count);
  return plan;
}

} // namespace

std::string gather_unsupported_reason(runtime::DeviceContext& context, const GatherProblem& g) {
  return plan(context, g).reason();
}

void gather_rows(runtime::DeviceContext& context, const GatherProblem& g) {
  const bool wide = g.index.dtype == c10::kLong;
  const auto source = [&] {
    return render(wgsl::gather, {{"index_type", wide ? "i64" : "i32"}, {"workgroup_size", std::to_string(kWorkgroupSize)}});
  };
  auto planned = plan(context, g);
  planned.run(wide ? "gather/i64" : "gather/i32", source, groups_for(planned.params.total_words));
}

} // namespace torch_dml::kernels
