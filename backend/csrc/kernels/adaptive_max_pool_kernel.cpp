#include "kernels/adaptive_max_pool_kernel.h"


#include "kernels/dtypes.h"
#include "kernels/generated/wgsl_params.h"
#include "kernels/generated/wgsl_sources.h"
#include "kernels/launch.h"
#include "kernels/wgsl_store.h"

namespace torch_dml::kernels {
namespace {

template <typename P>
LaunchPlan<P> plan(runtime::DeviceContext& context, const AdaptiveMaxPoolProblem& a) {
  LaunchPlan<P> plan(context, a.backward ? "adaptive_max_pool2d_backward" : "adaptive_max_pool2d", a.src.dtype);
  Launch& launch = plan.launch;
  const c10::ScalarType type = a.src.dtype;
  launch.require(is_float_family(type) || type == c10::kDouble, "a dtype that is not floating point");
  launch.require(type != c10::kDouble || context.has(runtime::Feature::ShaderF64), "float64 without shader-f64");
  const uint64_t pooled = a.planes * a.out_h * a.out_w, image = a.planes * a.in_h * a.in_w;
  launch.require_u32(image, "input elements");
  launch.require_u32(2 * pooled, "index words");
  // The window bounds multiply an output index by an input size (the backward: an input index by an
  // output size) in 32 bits.
  launch.require_u32((a.out_h + 1) * a.in_h + a.out_h, "rows x output rows");
  launch.require_u32((a.out_w + 1) * a.in_w + a.out_w, "columns x output columns");
  launch.require_u32((a.in_h + 1) * a.out_h + a.in_h, "output rows x rows");
  launch.require_u32((a.in_w + 1) * a.out_w + a.in_w, "output columns x columns");
  P& p = plan.params;
  p.count = static_cast<uint32_t>(a.backward ? image : pooled);
  p.in_h = static_cast<uint32_t>(a.in_h);
  p.in_w = static_cast<uint32_t>(a.in_w);
  p.out_h = static_cast<uint32_t>(a.out_h);
  p.out_w = static_cast<uint32_t>(a.out_w);
  p.src_offset = launch.bind(a.src, a.backward ? pooled : image);
  p.out_offset = launch.bind(a.out, a.backward ? image : pooled);
  p.index_offset = launch.bind(a.indices, 2 * pooled, 4);
  return plan;
}

} // namespace

std::string adaptive_max_pool_unsupported_reason(runtime::DeviceContext& context, const AdaptiveMaxPoolProblem& a) {
  return a.backward ? plan<wgsl::AdaptiveMaxPoolBackwardParams>(context, a).reason()
                    : plan<wgsl::AdaptiveMaxPoolParams>(context, a).reason();
}

void adaptive_max_pool(runtime::DeviceContext& context, const AdaptiveMaxPoolProblem& a) {
  if (a.planes * a.out_h * a.out_w == 0) return;
  if (a.backward) {
    const c10::ScalarType type = a.src.dtype;
    const bool f64 = type == c10::kDouble;
    auto planned = plan<wgsl::AdaptiveMaxPoolBackwardParams>(context, a);
    planned.run(std::string("adaptive_max_pool2d_backward/") + dtype_info(type)->name,
                [&] {
                  return render(wgsl::adaptive_max_pool_backward,
                                {{"element", typed_array_type(type)},
                                 {"real", f64 ? "f64" : "f32"},
                                 {"load", typed_load(type, "grad", "i")},
                                 {"zero", zero_literal(f64 ? Value::F64 : Value::F32)},
                                 {"workgroup_size", std::to_string(kWorkgroupSize)}});
                },
                groups_for(planned.params.count));
    return;
  }
  const c10::ScalarType type = a.src.dtype;
  const bool f64 = type == c10::kDouble;
  const auto source = [&] {
    return render(wgsl::adaptive_max_pool,
                  {{"element", typed_array_type(type)},
                   {"real", f64 ? "f64" : "f32"},
                   {"load", typed_load(type, "source", "i")},
                   {"is_nan", f64 ? "(bitcast<u64>(v) & 0x7ffffffffffffffflu) > 0x7ff0000000000000lu"
                                  : "(bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u"},
                   {"negative_infinity", f64 ? "bitcast<f64>(0xfff0000000000000lu)" : "bitcast<f32>(0xff800000u)"},
                   {"workgroup_size", std::to_string(kWorkgroupSize)}});
  };
  auto planned = plan<wgsl::AdaptiveMaxPoolParams>(context, a);
  planned.run(std::string("adaptive_max_pool2d/") + dtype_info(type)->name, source, groups_for(planned.params.count));
}

} // namespace torch_dml::kernels
