#include "kernels/pool2d_kernel.h"

#include <vector>

#include "kernels/dtypes.h"
#include "kernels/generated/wgsl_params.h"
#include "kernels/generated/wgsl_sources.h"
#include "kernels/launch.h"
#include "kernels/wgsl_family.h"
#include "kernels/wgsl_store.h"

namespace torch_dml::kernels {
namespace {

// Every pooling kernel takes lib/pool_window.wgsl's Params; one function fills any of them.
using Params = wgsl::MaxPool2dParams;
static_assert(sizeof(Params) == sizeof(wgsl::MaxPool2dBackwardParams) &&
                  sizeof(Params) == sizeof(wgsl::AvgPool2dParams) &&
                  sizeof(Params) == sizeof(wgsl::AvgPool2dBackwardParams),
              "the pooling kernels take lib/pool_window.wgsl's Params");

const char* op_name(const Pool2dProblem& m) {
  switch (m.kind) {
    case PoolKind::Max: return m.backward ? "max_pool2d_backward" : "max_pool2d";
    case PoolKind::Average: return m.backward ? "avg_pool2d_backward" : "avg_pool2d";
    case PoolKind::AdaptiveAverage: return m.backward ? "adaptive_avg_pool2d_backward" : "adaptive_avg_pool2d";
  }
  return "pool2d";
}

LaunchPlan<Params> plan(runtime::DeviceContext& context, const Pool2dProblem& m) {
  LaunchPlan<Params> plan(context, op_name(m), m.dtype);
  Launch& launch = plan.launch;
  const Pool2dGeometry& g = m.g;
  const bool max = m.kind == PoolKind::Max;
  launch.require(is_float_family(m.dtype) || m.dtype == c10::kDouble, "a dtype that is not floating point");
  launch.require(m.dtype != c10::kDouble || context.has(runtime::Feature::ShaderF64), "float64 without shader-f64");
  // max_pool2d's float64 kernels order values on their bits as u64.
  launch.require(m.dtype != c10::kDouble || !max || context.has(runtime::Feature::ShaderInt64),
                 "float64 without shader-int64");
  for (const ImageOperand* op : {&m.image, &m.pooled})
    launch.require(image_strides_fit(*op), "a negative stride or one above 2^32");
  if (max) launch.require(image_strides_fit(m.indices), "a negative stride or one above 2^32");
  // Adaptive windows are found with (out + 1) * in in u32.
  if (m.kind == PoolKind::AdaptiveAverage)
    for (uint64_t v : {(g.out_h + 1) * g.in_h, (g.out_w + 1) * g.in_w, (g.in_h + 1) * g.out_h, (g.in_w + 1) * g.out_w})
      launch.require_u32(v, "adaptive windows");
  launch.require(m.divisor_override >= INT32_MIN && m.divisor_override <= INT32_MAX, "a divisor beyond 32 bits");
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
  Params& p = plan.params;
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
  if (max) p.index_offset = launch.bind(m.indices.ref, image_span(m.indices, pooled_sizes) + 1, 4);
  return plan;
}

std::string source(const Pool2dProblem& m) {
  const bool f64 = m.dtype == c10::kDouble;
  const Value real = f64 ? Value::F64 : Value::F32;
  std::vector<Hole> holes = {{"channels_fast", m.channels_fast ? "true" : "false"},
                             {"element", typed_array_type(m.dtype)},
                             {"real", wgsl_type(real)},
                             {"load", typed_load(m.dtype, m.backward ? "pooled" : "image", "i")},
                             {"workgroup_size", std::to_string(kWorkgroupSize)}};
  if (m.kind != PoolKind::Max) {
    holes.insert(holes.end(), {{"adaptive", m.kind == PoolKind::AdaptiveAverage ? "true" : "false"},
                               {"count_include_pad", m.count_include_pad ? "true" : "false"},
                               {"divisor_override", std::to_string(m.divisor_override)},
                               {"zero", zero_literal(real)}});
    return render(m.backward ? wgsl::avg_pool2d_backward : wgsl::avg_pool2d, holes);
  }
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

void run(runtime::DeviceContext& context, const Pool2dProblem& m) {
  auto planned = plan(context, m);
  std::string name = std::string(op_name(m)) + "/" + dtype_info(m.dtype)->name + (m.channels_fast ? "/cl" : "");
  if (m.kind == PoolKind::Average)
    name += std::string(m.count_include_pad ? "/pad" : "") +
            (m.divisor_override ? "/div" + std::to_string(m.divisor_override) : "");
  planned.run(name, [&] { return source(m); }, groups_for(planned.params.count));
}

} // namespace

std::string pool2d_unsupported_reason(runtime::DeviceContext& context, const Pool2dProblem& m) {
  return plan(context, m).reason();
}

void pool2d(runtime::DeviceContext& context, const Pool2dProblem& m) {
  const Pool2dGeometry& g = m.g;
  if (g.batch * g.channels * (m.backward ? g.in_h * g.in_w : g.out_h * g.out_w) == 0) return;
  run(context, m);
}

} // namespace torch_dml::kernels
