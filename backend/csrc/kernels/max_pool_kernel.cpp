#include "kernels/max_pool_kernel.h"

#include <vector>

#include "kernels/dtypes.h"
#include "kernels/generated/wgsl_params.h"
#include "kernels/generated/wgsl_sources.h"
#include "kernels/launch.h"
#include "kernels/wgsl_family.h"
#include "kernels/wgsl_store.h"

namespace torch_dml::kernels {
namespace {

static_assert(sizeof(wgsl::MaxPool2dParams) == sizeof(wgsl::MaxPool2dBackwardParams),
              "both max_pool2d kernels take lib/pool_window.wgsl's Params");

// The forward plan binds the same fields as the backward one; one function fills either.
template <typename P>
LaunchPlan<P> plan(runtime::DeviceContext& context, const MaxPool2dProblem& m) {
  const char* op = m.backward ? "max_pool2d_backward" : "max_pool2d";
  LaunchPlan<P> plan(context, op, m.dtype);
  Launch& launch = plan.launch;
  const MaxPool2dGeometry& g = m.g;
  launch.require(is_float_family(m.dtype) || m.dtype == c10::kDouble, "a dtype that is not floating point");
  launch.require(m.dtype != c10::kDouble ||
                     (context.has(runtime::Feature::ShaderF64) && context.has(runtime::Feature::ShaderInt64)),
                 "float64 without shader-f64 and shader-int64");
  for (const ImageOperand* op : {&m.image, &m.pooled, &m.indices})
    launch.require(image_strides_fit(*op), "a negative stride or one above 2^32");
  // Window positions are i32: every extent, and the furthest a window reaches, stays below 2^30.
  for (int a = 0; a < 2; ++a) {
    const uint64_t in = a == 0 ? g.in_h : g.in_w, out = a == 0 ? g.out_h : g.out_w;
    for (uint64_t v : {in, out, out * g.stride[a] + g.padding[a] + g.kernel[a] * g.dilation[a]})
      launch.require(v < (1ull << 30), "a spatial extent of 2^30 or more");
  }
  const uint64_t image_sizes[4] = {g.batch, g.channels, g.in_h, g.in_w};
  const uint64_t pooled_sizes[4] = {g.batch, g.channels, g.out_h, g.out_w};
  const uint64_t planes = g.batch * g.channels;
  const uint64_t threads = planes * (m.backward ? g.in_h * g.in_w : g.out_h * g.out_w);
  launch.require_u32(threads, m.backward ? "input elements" : "output elements");
  launch.require_u32(g.in_h * g.in_w, "elements per plane");
  P& p = plan.params;
  p.count = static_cast<uint32_t>(threads);
  p.channels = static_cast<uint32_t>(g.channels);
  p.in_h = static_cast<uint32_t>(g.in_h), p.in_w = static_cast<uint32_t>(g.in_w);
  p.out_h = static_cast<uint32_t>(g.out_h), p.out_w = static_cast<uint32_t>(g.out_w);
  p.kernel_h = static_cast<uint32_t>(g.kernel[0]), p.kernel_w = static_cast<uint32_t>(g.kernel[1]);
  p.stride_h = static_cast<uint32_t>(g.stride[0]), p.stride_w = static_cast<uint32_t>(g.stride[1]);
  p.pad_h = static_cast<uint32_t>(g.padding[0]), p.pad_w = static_cast<uint32_t>(g.padding[1]);
  p.dilation_h = static_cast<uint32_t>(g.dilation[0]), p.dilation_w = static_cast<uint32_t>(g.dilation[1]);
  put_image_strides(m.image, p.image);
  put_image_strides(m.pooled, p.pooled);
  put_image_strides(m.indices, p.index);
  p.image_offset = launch.bind(m.image.ref, image_span(m.image, image_sizes));
  p.pooled_offset = launch.bind(m.pooled.ref, image_span(m.pooled, pooled_sizes));
  // The span reaches the last index's low word; its high word follows.
  p.index_offset = launch.bind(m.indices.ref, image_span(m.indices, pooled_sizes) + 1, 4);
  return plan;
}

std::string source(const MaxPool2dProblem& m) {
  const bool f64 = m.dtype == c10::kDouble;
  const Value real = f64 ? Value::F64 : Value::F32;
  std::vector<Hole> holes = {{"channels_fast", m.channels_fast ? "true" : "false"},
                             {"element", typed_array_type(m.dtype)},
                             {"real", wgsl_type(real)},
                             {"load", typed_load(m.dtype, m.backward ? "pooled" : "image", "i")},
                             {"workgroup_size", std::to_string(kWorkgroupSize)}};
  if (m.backward) {
    holes.push_back({"zero", zero_literal(real)});
    return render(wgsl::max_pool2d_backward, holes);
  }
  // The forward orders values on their bits, in an unsigned integer of the value's width.
  holes.insert(holes.end(), {{"bits", f64 ? "u64" : "u32"},
                             {"sign_bit", f64 ? "0x8000000000000000lu" : "0x80000000u"},
                             {"inf_bits", f64 ? "0x7ff0000000000000lu" : "0x7f800000u"},
                             {"abs_mask", f64 ? "0x7ffffffffffffffflu" : "0x7fffffffu"},
                             {"zero", f64 ? "0lu" : "0u"}});
  return render(wgsl::max_pool2d, holes);
}

template <typename P>
void run(runtime::DeviceContext& context, const MaxPool2dProblem& m) {
  auto planned = plan<P>(context, m);
  const std::string name = std::string(m.backward ? "max_pool2d_backward/" : "max_pool2d/") +
                           dtype_info(m.dtype)->name + (m.channels_fast ? "/cl" : "");
  planned.run(name, [&] { return source(m); }, groups_for(planned.params.count));
}

} // namespace

std::string max_pool2d_unsupported_reason(runtime::DeviceContext& context, const MaxPool2dProblem& m) {
  return m.backward ? plan<wgsl::MaxPool2dBackwardParams>(context, m).reason()
                    : plan<wgsl::MaxPool2dParams>(context, m).reason();
}

void max_pool2d(runtime::DeviceContext& context, const MaxPool2dProblem& m) {
  const MaxPool2dGeometry& g = m.g;
  if (g.batch * g.channels * (m.backward ? g.in_h * g.in_w : g.out_h * g.out_w) == 0) return;
  if (m.backward) {
    run<wgsl::MaxPool2dBackwardParams>(context, m);
  } else {
    run<wgsl::MaxPool2dParams>(context, m);
  }
}

} // namespace torch_dml::kernels
