// The depthwise convolutions' kernels: forward and grad_input (wgsl/conv2d_depthwise.wgsl), one thread per
// output element over its taps, and grad_weight (wgsl/conv2d_depthwise_weight.wgsl), one workgroup per
// output channel, tile of taps and slice of pixels. As GEMMs per group (conv_kernel.cpp) these are a
// (channel multiplier) x (taps) problem in a 64x64 tile of which a handful of elements are used.
#include <c10/util/Exception.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "kernels/conv_parts.h"
#include "kernels/dtypes.h"
#include "kernels/generated/wgsl_params.h"
#include "kernels/generated/wgsl_sources.h"
#include "kernels/launch.h"
#include "kernels/split_k.h"
#include "kernels/wgsl_family.h"
#include "runtime/allocator.h"

namespace torch_dml::kernels::conv {
namespace {

// The geometry both depthwise kernels' Params hold under the same names.
template <typename P>
void put_depthwise_window(const Conv2dGeometry& g, P& p) {
  p.multiplier = static_cast<uint32_t>(g.out_channels / g.groups);
  p.out_h = static_cast<uint32_t>(g.out_h);
  p.out_w = static_cast<uint32_t>(g.out_w);
  p.in_h = static_cast<uint32_t>(g.in_h);
  p.in_w = static_cast<uint32_t>(g.in_w);
  p.kernel_w = static_cast<uint32_t>(g.kernel_w);
  p.stride_h = static_cast<uint32_t>(g.stride[0]);
  p.stride_w = static_cast<uint32_t>(g.stride[1]);
  p.pad_h = static_cast<uint32_t>(g.padding[0]);
  p.pad_w = static_cast<uint32_t>(g.padding[1]);
  p.dilation_h = static_cast<uint32_t>(g.dilation[0]);
  p.dilation_w = static_cast<uint32_t>(g.dilation[1]);
}

LaunchPlan<wgsl::Conv2dDepthwiseParams> depthwise_plan(runtime::DeviceContext& context, const Conv2dProblem& c) {
  const Conv2dGeometry& g = c.g;
  const bool backward = c.pass == ConvPass::GradInput;
  // The tensor the taps read: the input, or grad_output for grad_input.
  const ConvOperand& read = backward ? c.grad_output : c.input;
  const c10::ScalarType type = read.ref.dtype;
  LaunchPlan<wgsl::Conv2dDepthwiseParams> plan(context, name_of(c.pass, kPassOps), type);
  Launch& launch = plan.launch;
  launch.require(is_float_family(type), "a dtype other than float32, float16 or bfloat16");
  launch.require(c.weight.ref.dtype == type && (!c.bias || c.bias->dtype == type), "operands of different dtypes");
  launch.require(c.out.ref.dtype == c10::kFloat, "an output other than float32");
  for (const ConvOperand* op : {&read, &c.weight, &c.out})
    launch.require(image_strides_fit(*op), "a negative stride or one above 2^32");
  if (!launch.ok()) return plan;
  const uint64_t count =
      backward ? g.batch * g.in_channels * g.in_h * g.in_w : g.batch * g.out_channels * g.out_h * g.out_w;
  launch.require_u32(count, "output elements");
  require_spatial(launch, g);
  wgsl::Conv2dDepthwiseParams& p = plan.params;
  p.count = static_cast<uint32_t>(count);
  p.channels = static_cast<uint32_t>(backward ? g.in_channels : g.out_channels);
  put_depthwise_window(g, p);
  p.kernel_h = static_cast<uint32_t>(g.kernel_h);
  put_image_strides(read, p.input);
  put_image_strides(c.weight, p.weight);
  put_image_strides(c.out, p.dst);
  const uint64_t x_sizes[4] = {g.batch, g.in_channels, g.in_h, g.in_w};
  const uint64_t w_sizes[4] = {g.out_channels, 1, g.kernel_h, g.kernel_w};
  const uint64_t y_sizes[4] = {g.batch, g.out_channels, g.out_h, g.out_w};
  p.out_offset = launch.bind(c.out.ref, image_span(c.out, backward ? x_sizes : y_sizes));
  p.input_offset = launch.bind(read.ref, image_span(read, backward ? y_sizes : x_sizes));
  p.weight_offset = launch.bind(c.weight.ref, image_span(c.weight, w_sizes));
  p.bias_offset =
      c.bias ? launch.bind(*c.bias, g.out_channels) : launch.bind(c.weight.ref, image_span(c.weight, w_sizes));
  return plan;
}

void run_depthwise(LaunchPlan<wgsl::Conv2dDepthwiseParams>& plan, const Conv2dProblem& c) {
  const bool backward = c.pass == ConvPass::GradInput;
  const c10::ScalarType type = backward ? c.grad_output.ref.dtype : c.input.ref.dtype;
  const bool cl = c.channels_last, bias = c.bias.has_value();
  const std::string name = std::string("conv2d_depthwise/") + dtype_info(type)->name + (cl ? "/cl" : "") +
      (bias ? "/bias" : "") + (backward ? "/grad_input" : "");
  plan.run(name,
           [=] {
             return render(wgsl::conv2d_depthwise, {{"channels_last", cl ? "true" : "false"},
                                                    {"with_bias", bias ? "true" : "false"},
                                                    {"backward", backward ? "true" : "false"},
                                                    {"load_input", load(type, "input")},
                                                    {"load_weight", load(type, "weight")},
                                                    {"load_bias", load(type, "bias")},
                                                    {"workgroup_size", std::to_string(kWorkgroupSize)}});
           },
           groups_for(plan.params.count));
}

// Depthwise grad_weight (wgsl/conv2d_depthwise_weight.wgsl): taps per workgroup at most, so that a 7x7
// kernel's per-thread sums stay within registers (two tiles of 25) and a 5x5 one runs in one.
constexpr uint64_t kMaxWeightTile = 25;
// Its threads per workgroup, a power of two: few enough that 25 taps' sums of each fit workgroup memory.
constexpr uint64_t kLogWeightLanes = 6;
constexpr uint64_t kWeightLanes = uint64_t{1} << kLogWeightLanes;
// Output channels per workgroup over channels_last operands (one for the others): 16 adjacent floats
// (64 bytes, 32 in 16 bits) per pixel load, 4 pixel lanes.
constexpr uint64_t kLogWeightChannelsLast = 4;
// Pixels a slice of it walks at least: several per thread before its taps' tree folds.
constexpr uint64_t kMinWeightSliceDepth = 16 * kWeightLanes;

struct WeightPlan : LaunchPlan<wgsl::Conv2dDepthwiseWeightParams> {
  using LaunchPlan::LaunchPlan;
  uint64_t tile = 1;
  uint64_t log_channels = 0; // log2 of the output channels per workgroup
};

// Whether `out` holds each channel's taps as one run of stride 1 in (kh, kw) order, as the sum of the
// partials writes them.
bool taps_linear(const Conv2dProblem& c) {
  return c.out.strides[3] == 1 && (c.g.kernel_h == 1 || c.out.strides[2] == static_cast<int64_t>(c.g.kernel_w));
}

// Slices of N * OH * OW: split_k_slices' count for the larger GPUs, and at least enough that none is
// deeper than kMaxDepth.
uint64_t weight_slices(runtime::DeviceContext& context, const Conv2dProblem& c, uint64_t blocks) {
  const Conv2dGeometry& g = c.g;
  const uint64_t pixels = g.batch * g.out_h * g.out_w, taps = g.kernel_h * g.kernel_w;
  uint64_t slices = split_k_slices(context, {.tiles = blocks,
                                             .k = pixels,
                                             .batches = 1,
                                             .bytes_per_slice = g.out_channels * taps * sizeof(float),
                                             .min_slice_depth = kMinWeightSliceDepth,
                                             .min_split_depth = 2 * kMinWeightSliceDepth});
  slices = std::max(slices, (pixels + kMaxDepth - 1) / kMaxDepth);
  if (slices <= 1) return 1;
  return round_slices(pixels, slices, kWeightLanes).slices;
}

// The plan of the depthwise grad_weight, into `partials` when split; without them a split plan only
// checks (the partials are the allocator's to give).
WeightPlan depthwise_weight_plan(runtime::DeviceContext& context, const Conv2dProblem& c,
                                 const DeviceTensorRef* partials = nullptr) {
  const Conv2dGeometry& g = c.g;
  const c10::ScalarType type = c.input.ref.dtype;
  WeightPlan plan(context, name_of(c.pass, kPassOps), type);
  Launch& launch = plan.launch;
  launch.require(is_float_family(type), "a dtype other than float32, float16 or bfloat16");
  launch.require(c.grad_output.ref.dtype == type, "operands of different dtypes");
  launch.require(c.out.ref.dtype == c10::kFloat, "an output other than float32");
  for (const ConvOperand* op : {&c.input, &c.grad_output, &c.out})
    launch.require(image_strides_fit(*op), "a negative stride or one above 2^32");
  if (!launch.ok()) return plan;
  const uint64_t pixels = g.batch * g.out_h * g.out_w, taps = g.kernel_h * g.kernel_w;
  const uint64_t tiles = (taps + kMaxWeightTile - 1) / kMaxWeightTile;
  plan.tile = (taps + tiles - 1) / tiles;
  plan.log_channels = c.channels_last ? kLogWeightChannelsLast : 0;
  const uint64_t channels = uint64_t{1} << plan.log_channels;
  const uint64_t blocks = (g.out_channels + channels - 1) / channels * tiles;
  const uint64_t slices = weight_slices(context, c, blocks);
  const uint64_t depth = slices > 1 ? round_slices(pixels, slices, kWeightLanes).depth : pixels;
  launch.require(depth <= kMaxDepth, "a reduction deeper than 32768 in one workgroup");
  launch.require(slices == 1 || taps_linear(c), "a weight gradient whose taps are not one run");
  launch.require_u32(pixels + kWeightLanes, "output pixels");
  launch.require_u32(blocks * slices, "workgroups");
  launch.require_u32(slices * g.out_channels * taps, "partial sums");
  launch.require(slices == 1 || slices * g.out_channels * taps * sizeof(float) <=
                                    context.limits().maxStorageBufferBindingSize,
                 "partial sums beyond one storage binding");
  require_spatial(launch, g);
  wgsl::Conv2dDepthwiseWeightParams& p = plan.params;
  p.pixels = static_cast<uint32_t>(pixels);
  p.depth = static_cast<uint32_t>(depth);
  p.slices = static_cast<uint32_t>(slices);
  p.tiles = static_cast<uint32_t>(tiles);
  p.workgroups = static_cast<uint32_t>(blocks * slices);
  p.out_channels = static_cast<uint32_t>(g.out_channels);
  p.taps = static_cast<uint32_t>(taps);
  put_depthwise_window(g, p);
  put_image_strides(c.input, p.input);
  put_image_strides(c.grad_output, p.grad);
  const uint64_t x_sizes[4] = {g.batch, g.in_channels, g.in_h, g.in_w};
  const uint64_t w_sizes[4] = {g.out_channels, 1, g.kernel_h, g.kernel_w};
  const uint64_t y_sizes[4] = {g.batch, g.out_channels, g.out_h, g.out_w};
  if (slices > 1) {
    const uint32_t dst[4] = {static_cast<uint32_t>(taps), static_cast<uint32_t>(g.kernel_w), 1,
                             static_cast<uint32_t>(g.out_channels * taps)};
    std::copy(dst, dst + 4, p.dst);
    // Checked without binding until the caller has the partials.
    p.out_offset = partials ? launch.bind(*partials, slices * g.out_channels * taps) : 0;
  } else {
    const uint32_t dst[4] = {static_cast<uint32_t>(c.out.strides[0]), static_cast<uint32_t>(c.out.strides[2]),
                             static_cast<uint32_t>(c.out.strides[3]), 0};
    std::copy(dst, dst + 4, p.dst);
    p.out_offset = launch.bind(c.out.ref, image_span(c.out, w_sizes));
  }
  p.input_offset = launch.bind(c.input.ref, image_span(c.input, x_sizes));
  p.grad_offset = launch.bind(c.grad_output.ref, image_span(c.grad_output, y_sizes));
  return plan;
}

// The depthwise grad_weight's plan when it takes the problem; what it cannot take, the GEMM's may.
std::optional<WeightPlan> depthwise_weight(runtime::DeviceContext& context, const Conv2dProblem& c) {
  if (c.pass != ConvPass::GradWeight || !conv2d_is_depthwise(c.g)) return std::nullopt;
  WeightPlan plan = depthwise_weight_plan(context, c);
  if (!plan.launch.ok()) return std::nullopt;
  return plan;
}

// `check`: depthwise_weight's plan, which binds all but a split's partials.
void run_depthwise_weight(runtime::DeviceContext& context, const Conv2dProblem& c, WeightPlan check) {
  const c10::ScalarType type = c.input.ref.dtype;
  const uint64_t slices = check.params.slices;
  c10::DataPtr holder;
  DeviceTensorRef partials;
  if (slices > 1) {
    // Freed (back to the pool) on return: later work reusing the memory is recorded after these
    // dispatches.
    const uint64_t count = slices * c.g.out_channels * check.params.taps;
    holder = runtime::device_allocator().allocate_on(context.index(), count * sizeof(float));
    const runtime::BufferSpan span = runtime::device_allocator().resolve(holder.get());
    partials = {span.buffer, span.buffer_size, span.offset / sizeof(float), c10::kFloat};
  }
  WeightPlan plan = slices > 1 ? depthwise_weight_plan(context, c, &partials) : std::move(check);
  const uint64_t tile = plan.tile, log_channels = plan.log_channels;
  const std::string name = std::string("conv2d_depthwise_weight/") + dtype_info(type)->name + "/" +
      std::to_string(tile) + (log_channels ? "/cl" : "");
  plan.run(name,
           [=] {
             return render(wgsl::conv2d_depthwise_weight, {{"tile", std::to_string(tile)},
                                                           {"channels", std::to_string(uint64_t{1} << log_channels)},
                                                           {"log_channels", std::to_string(log_channels)},
                                                           {"log_workgroup_size", std::to_string(kLogWeightLanes)},
                                                           {"load_input", load(type, "input")},
                                                           {"load_grad", load(type, "grad_output")},
                                                           {"workgroup_size", std::to_string(kWeightLanes)}});
           },
           plan.params.workgroups);
  if (slices > 1) sum_slices(context, c, partials, slices);
}

bool uses_depthwise(const Conv2dProblem& c) {
  return c.pass != ConvPass::GradWeight && conv2d_is_depthwise(c.g);
}

} // namespace

std::optional<std::string> depthwise_unsupported_reason(runtime::DeviceContext& context, const Conv2dProblem& c) {
  if (uses_depthwise(c)) return depthwise_plan(context, c).reason();
  if (depthwise_weight(context, c)) return "";
  return std::nullopt;
}

bool run_depthwise_conv2d(runtime::DeviceContext& context, const Conv2dProblem& c) {
  if (uses_depthwise(c)) {
    auto plan = depthwise_plan(context, c);
    run_depthwise(plan, c); // throws the reason when it cannot run
    return true;
  }
  if (std::optional<WeightPlan> weight = depthwise_weight(context, c)) {
    run_depthwise_weight(context, c, std::move(*weight));
    return true;
  }
  return false;
}

} // namespace torch_dml::kernels::conv
