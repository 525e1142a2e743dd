#include "kernels/upsample_kernel.h"

#include <cstring>

#include "kernels/dtypes.h"
#include "kernels/generated/wgsl_params.h"
#include "kernels/generated/wgsl_sources.h"
#include "kernels/launch.h"
#include "kernels/wgsl_store.h"

namespace torch_dml::kernels {
namespace {

// The op of each UpsampleMode, in its order.
constexpr const char* kModeOps[] = {"upsample_nearest2d", "_upsample_nearest_exact2d", "upsample_bilinear2d"};

// Elements a thread writes: a 16-bit dtype's pair shares a word.
uint32_t lanes_of(c10::ScalarType type) { return c10::elementSize(type) == 2 ? 2 : 1; }

LaunchPlan<wgsl::UpsampleParams> plan(runtime::DeviceContext& context, const UpsampleProblem& u) {
  const c10::ScalarType type = u.src.dtype;
  LaunchPlan<wgsl::UpsampleParams> plan(context, name_of(u.mode, kModeOps), type);
  Launch& launch = plan.launch;
  launch.require(is_float_family(type) || type == c10::kDouble,
                 "a dtype other than float32, float16, bfloat16 or float64");
  // float64 reads its scales and keeps its products opaque through 64-bit integers.
  launch.require(type != c10::kDouble ||
                     (context.has(runtime::Feature::ShaderF64) && context.has(runtime::Feature::ShaderInt64)),
                 "float64 needs shader-f64 and shader-int64");
  launch.require(u.dst.dtype == type, "operands of different dtypes");
  const uint32_t lanes = lanes_of(type);
  const uint64_t in_count = u.planes * u.h.in * u.w.in, out_count = u.planes * u.h.out * u.w.out;
  const uint64_t dst_count = u.backward ? in_count : out_count, src_count = u.backward ? out_count : in_count;
  // Index arithmetic stays in u32, and the float index math is exact only below 2^23.
  launch.require_u32(in_count, "input elements");
  launch.require_u32(out_count + lanes, "output elements");
  launch.require(u.h.in < (1u << 23) && u.w.in < (1u << 23) && u.h.out < (1u << 23) && u.w.out < (1u << 23),
                 "a spatial size of 2^23 or more");
  wgsl::UpsampleParams& p = plan.params;
  p.count = static_cast<uint32_t>(dst_count);
  p.words = static_cast<uint32_t>((dst_count + lanes - 1) / lanes);
  p.dst_offset = launch.bind(u.dst, dst_count);
  p.src_offset = launch.bind(u.src, src_count);
  launch.require(p.dst_offset % lanes == 0, "an output that does not start on a word");
  p.in_h = static_cast<uint32_t>(u.h.in);
  p.in_w = static_cast<uint32_t>(u.w.in);
  p.out_h = static_cast<uint32_t>(u.h.out);
  p.out_w = static_cast<uint32_t>(u.w.out);
  p.rule_h = static_cast<uint32_t>(u.h.rule);
  p.rule_w = static_cast<uint32_t>(u.w.rule);
  p.align_corners = u.align_corners ? 1 : 0;
  p.opaque_zero = 0;
  const auto put_scale = [&](double scale, uint32_t* words) {
    if (type == c10::kDouble) {
      std::memcpy(words, &scale, 8);
    } else {
      const float single = static_cast<float>(scale); // exact: the host computed it in float32
      std::memcpy(words, &single, 4);
    }
  };
  put_scale(u.h.scale, &p.scales[0]);
  put_scale(u.w.scale, &p.scales[2]);
  return plan;
}

} // namespace

std::string upsample_unsupported_reason(runtime::DeviceContext& context, const UpsampleProblem& u) {
  return plan(context, u).reason();
}

void upsample(runtime::DeviceContext& context, const UpsampleProblem& u) {
  const c10::ScalarType type = u.src.dtype;
  const std::string name = std::string("upsample/") + name_of(u.mode, kModeOps) + (u.backward ? "_backward/" : "/") +
      dtype_info(type)->name;
  const auto source = [&] {
    const bool f64 = type == c10::kDouble;
    return render(wgsl::upsample, {{"mode", std::to_string(static_cast<uint32_t>(u.mode))},
                                   {"backward", u.backward ? "true" : "false"},
                                   {"lanes", std::to_string(lanes_of(type))},
                                   {"real", f64 ? "f64" : "f32"},
                                   {"element", typed_array_type(type)},
                                   {"scale", f64 ? "bitcast<f64>((u64(hi) << 32u) | u64(lo))" : "bitcast<f32>(lo)"},
                                   {"rounded", f64 ? "bitcast<f64>(bitcast<u64>(x) | u64(p.opaque_zero))"
                                                   : "bitcast<f32>(bitcast<u32>(x) | p.opaque_zero)"},
                                   {"load", typed_load(type, "source", "i")},
                                   {"store", store_form(type, "v")},
                                   {"workgroup_size", std::to_string(kWorkgroupSize)}});
  };
  auto planned = plan(context, u);
  planned.run(name, source, groups_for(planned.params.words));
}

} // namespace torch_dml::kernels
