#include "kernels/conv_kernel.h"

#include <c10/util/Exception.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "kernels/conv_parts.h"
#include "kernels/dtypes.h"
#include "kernels/generated/wgsl_params.h"
#include "kernels/generated/wgsl_sources.h"
#include "kernels/launch.h"
#include "kernels/split_k.h"
#include "kernels/wgsl_family.h"
#include "kernels/wide_tile.h"
#include "runtime/allocator.h"

namespace torch_dml::kernels {
using namespace conv;
namespace {

// Output tiles (conv2d.wgsl): 64x64 with 4x4 outputs per thread and K steps of 16, or 128x128 with 8x8
// per thread (vec4 registers) and K steps of 8, the shape gemm128.wgsl measured fastest on an H100;
// kernels/wide_tile.h says when the wide one is taken.
constexpr uint64_t kTile = kNarrowTile;
constexpr uint32_t kKStep = 16;
// Split-K of grad_weight (kernels/split_k.h): slices deep enough that each partial tile's store is a
// small part of its slice's work.
constexpr uint64_t kMinSliceDepth = 256;
// What one dispatch walks along one spatial axis: the grid its pixel index runs over and the kernel
// taps. The forward pass and grad_weight walk the whole output and kernel; grad_input one phase of
// its stride (conv2d.wgsl): the input positions first + step * a, and the taps whose output position
// divides exactly.
struct Axis {
  uint64_t grid = 0;
  uint64_t row_first = 0, row_step = 1; // grad_input: input position of grid point a
  uint64_t base = 0;                    // the kernel's pad field
  uint64_t taps = 0;
  uint64_t tap_first = 0, tap_step = 1; // kernel index of tap i
  uint64_t tap_base = 0, tap_mul = 1;   // spatial offset of tap i
};

Axis whole_axis(uint64_t out, uint64_t pad, uint64_t kernel, uint64_t dilation) {
  return {out, 0, 1, pad, kernel, 0, 1, 0, dilation};
}

// Phase `phase` of grad_input along an axis: input positions i with (i + pad) % stride == phase, and
// taps k with (k * dilation) % stride == phase, for which (i + pad - k * dilation) / stride is exact.
Axis grad_input_axis(uint64_t in, uint64_t pad, uint64_t kernel, uint64_t dilation, uint64_t stride,
                     uint64_t phase) {
  Axis a;
  a.row_first = (phase + stride - pad % stride) % stride;
  a.row_step = stride;
  a.grid = a.row_first < in ? (in - a.row_first + stride - 1) / stride : 0;
  a.base = (a.row_first + pad - phase) / stride;
  const uint64_t common = std::gcd(dilation, stride);
  a.tap_step = stride / common;
  // The taps of a phase repeat every tap_step; a phase none of the first tap_step reach has none.
  a.tap_first = kernel;
  for (uint64_t k = 0; k < std::min(a.tap_step, kernel); ++k)
    if (k * dilation % stride == phase) {
      a.tap_first = k;
      break;
    }
  a.taps = a.tap_first < kernel ? (kernel - a.tap_first + a.tap_step - 1) / a.tap_step : 0;
  a.tap_base = a.taps ? (a.tap_first * dilation - phase) / stride : 0;
  if (!a.taps) a.tap_first = 0;
  a.tap_mul = dilation / common;
  return a;
}

struct Walk {
  Axis h, w;
};

Walk whole_walk(const Conv2dGeometry& g) {
  return {whole_axis(g.out_h, g.padding[0], g.kernel_h, g.dilation[0]),
          whole_axis(g.out_w, g.padding[1], g.kernel_w, g.dilation[1])};
}

// The GEMM a pass computes per group.
struct GemmShape {
  uint64_t m = 0, n = 0, k = 0;
};

GemmShape gemm_shape(const Conv2dProblem& c, const Walk& walk) {
  const Conv2dGeometry& g = c.g;
  const uint64_t cin = g.in_channels / g.groups, cout = g.out_channels / g.groups;
  const uint64_t grid = g.batch * walk.h.grid * walk.w.grid, taps = walk.h.taps * walk.w.taps;
  switch (c.pass) {
    case ConvPass::Forward: return {grid, cout, cin * taps};
    case ConvPass::GradInput: return {grid, cin, cout * taps};
    case ConvPass::GradWeight: return {cout, cin * taps, grid};
  }
  return {};
}

uint64_t tile_of(runtime::DeviceContext& context, const GemmShape& s, uint64_t groups) {
  return tile_for(context, s.m, s.n, groups);
}

uint64_t slices_for(runtime::DeviceContext& context, const Conv2dProblem& c, const GemmShape& s) {
  if (c.pass != ConvPass::GradWeight) return 1;
  const uint64_t tile = tile_of(context, s, c.g.groups);
  return split_k_slices(context, {.tiles = ((s.m + tile - 1) / tile) * ((s.n + tile - 1) / tile) * c.g.groups,
                                  .k = s.k,
                                  .batches = c.g.groups,
                                  .bytes_per_slice = c.g.out_channels * s.n * sizeof(float),
                                  .min_slice_depth = kMinSliceDepth,
                                  .min_split_depth = 2 * kMinSliceDepth});
}

bool columns_linear(const Conv2dProblem& c);

// The slices grad_weight runs in: slices_for's, at least enough that none is deeper than kMaxDepth,
// after the rounding of their depth to K steps (which may leave fewer).
uint64_t split_slices(runtime::DeviceContext& context, const Conv2dProblem& c, const GemmShape& s) {
  if (c.pass != ConvPass::GradWeight || !columns_linear(c)) return 1;
  uint64_t slices = std::max(slices_for(context, c, s), (s.k + kMaxDepth - 1) / kMaxDepth);
  const uint64_t per_slice = c.g.out_channels * s.n * sizeof(float);
  const uint64_t binding = context.limits().maxStorageBufferBindingSize;
  slices = std::min(slices, std::max<uint64_t>(binding / std::max<uint64_t>(per_slice, 1), 1));
  slices = std::min<uint64_t>(slices, context.limits().maxComputeWorkgroupsPerDimension / c.g.groups);
  if (slices <= 1) return 1;
  return round_slices(s.k, slices, kKStep).slices;
}

// Whether grad_weight's columns (channel, kh, kw), in the order the kernel walks them, are one stride-1
// run of the output, as the split-K sum writes them.
bool columns_linear(const Conv2dProblem& c) {
  const auto& s = c.out.strides;
  const int64_t cin = static_cast<int64_t>(c.g.in_channels / c.g.groups);
  const int64_t kh = static_cast<int64_t>(c.g.kernel_h), kw = static_cast<int64_t>(c.g.kernel_w);
  if (c.channels_last) return s[1] == 1 && s[3] == cin && s[2] == cin * kw;
  return s[3] == 1 && s[2] == kw && s[1] == kh * kw;
}

struct Plan : LaunchPlan<wgsl::Conv2dParams> {
  using LaunchPlan::LaunchPlan;
  GemmShape shape;
  uint64_t slices = 1;
  uint64_t depth = 0;
  uint64_t tile = kTile;
  bool a_k_fast = false, b_k_fast = false;
};

// Binds out (or, split in `slices`, the partials), windowed, plain and bias, in the shader's order.
Plan plan(runtime::DeviceContext& context, const Conv2dProblem& c, const Walk& walk,
          const DeviceTensorRef* partials = nullptr, uint64_t slices = 1) {
  const Conv2dGeometry& g = c.g;
  const bool forward = c.pass == ConvPass::Forward, grad_input = c.pass == ConvPass::GradInput;
  const ConvOperand& windowed = grad_input ? c.grad_output : c.input;
  const ConvOperand& plain = c.pass == ConvPass::GradWeight ? c.grad_output : c.weight;
  const c10::ScalarType type = windowed.ref.dtype;
  Plan plan(context, name_of(c.pass, kPassOps), type);
  Launch& launch = plan.launch;
  launch.require(is_float_family(type), "a dtype other than float32, float16 or bfloat16");
  launch.require(plain.ref.dtype == type && (!c.bias || c.bias->dtype == type), "operands of different dtypes");
  launch.require(c.out.ref.dtype == c10::kFloat, "an output other than float32");
  launch.require(g.groups > 0 && g.in_channels % g.groups == 0 && g.out_channels % g.groups == 0,
                 "channels not divisible by groups");
  for (const ConvOperand* op : {&windowed, &plain, &c.out})
    launch.require(image_strides_fit(*op), "a negative stride or one above 2^32");
  if (!launch.ok()) return plan;
  const GemmShape s = gemm_shape(c, walk);
  plan.shape = s;
  const uint64_t tile = plan.tile = tile_of(context, s, g.groups);
  launch.require_u32(s.m + tile, "GEMM rows");
  launch.require_u32(s.n * tile, "GEMM columns");
  launch.require_u32(s.k + kKStep, "GEMM depth");
  const uint32_t max_groups = context.limits().maxComputeWorkgroupsPerDimension;
  // Rows beyond one dispatch's tiles run as successive dispatches (run_gemm); split-K (grad_weight,
  // whose rows are channels) needs its slices in one.
  plan.slices = slices;
  launch.require((s.n + tile - 1) / tile <= max_groups && g.groups * plan.slices <= max_groups &&
                     (plan.slices == 1 || (s.m + tile - 1) / tile <= max_groups),
                 "more output tiles than one dispatch holds");
  plan.depth = s.k;
  if (plan.slices > 1) plan.depth = round_slices(s.k, plan.slices, kKStep).depth;
  launch.require(plan.depth <= kMaxDepth, "a reduction deeper than 32768 in one workgroup");

  wgsl::Conv2dParams& p = plan.params;
  p.m = static_cast<uint32_t>(s.m);
  p.n = static_cast<uint32_t>(s.n);
  p.k = static_cast<uint32_t>(s.k);
  p.slices = static_cast<uint32_t>(plan.slices);
  p.depth = static_cast<uint32_t>(plan.depth);
  p.grid_h = static_cast<uint32_t>(walk.h.grid);
  p.grid_w = static_cast<uint32_t>(walk.w.grid);
  p.image_h = static_cast<uint32_t>(grad_input ? g.out_h : g.in_h);
  p.image_w = static_cast<uint32_t>(grad_input ? g.out_w : g.in_w);
  p.kernel_h = static_cast<uint32_t>(walk.h.taps);
  p.kernel_w = static_cast<uint32_t>(walk.w.taps);
  p.stride_h = static_cast<uint32_t>(g.stride[0]);
  p.stride_w = static_cast<uint32_t>(g.stride[1]);
  p.pad_h = static_cast<uint32_t>(walk.h.base);
  p.pad_w = static_cast<uint32_t>(walk.w.base);
  const Axis* axes[2] = {&walk.h, &walk.w};
  for (int d = 0; d < 2; ++d) {
    p.taps[d] = static_cast<uint32_t>(axes[d]->tap_base);
    p.taps[d + 2] = static_cast<uint32_t>(axes[d]->tap_mul);
    p.kernel[d] = static_cast<uint32_t>(axes[d]->tap_first);
    p.kernel[d + 2] = static_cast<uint32_t>(axes[d]->tap_step);
    p.rows[d] = static_cast<uint32_t>(axes[d]->row_first);
    p.rows[d + 2] = static_cast<uint32_t>(axes[d]->row_step);
  }
  p.group_in = static_cast<uint32_t>(g.in_channels / g.groups);
  p.group_out = static_cast<uint32_t>(g.out_channels / g.groups);
  p.channels = grad_input ? p.group_out : p.group_in;
  require_spatial(launch, g);
  put_image_strides(windowed, p.window);
  put_image_strides(plain, p.plain);

  const uint64_t x_sizes[4] = {g.batch, g.in_channels, g.in_h, g.in_w};
  const uint64_t w_sizes[4] = {g.out_channels, g.in_channels / g.groups, g.kernel_h, g.kernel_w};
  const uint64_t y_sizes[4] = {g.batch, g.out_channels, g.out_h, g.out_w};
  const uint64_t(&out_sizes)[4] = forward ? y_sizes : grad_input ? x_sizes : w_sizes;
  if (partials) {
    // [slice][o][column], the columns in the kernel's order.
    const uint64_t cin = g.in_channels / g.groups, taps = g.kernel_h * g.kernel_w;
    const uint64_t cols = cin * taps;
    p.dst[0] = static_cast<uint32_t>(cols);
    p.dst[1] = static_cast<uint32_t>(c.channels_last ? 1 : taps);
    p.dst[2] = static_cast<uint32_t>(c.channels_last ? g.kernel_w * cin : g.kernel_w);
    p.dst[3] = static_cast<uint32_t>(c.channels_last ? cin : 1);
    p.out_slice = static_cast<uint32_t>(g.out_channels * cols);
    launch.require_u32(plan.slices * g.out_channels * cols, "partial sums");
    p.out_offset = launch.bind(*partials, plan.slices * g.out_channels * cols);
  } else {
    put_image_strides(c.out, p.dst);
    p.out_offset = launch.bind(c.out.ref, image_span(c.out, out_sizes));
  }
  p.window_offset = launch.bind(windowed.ref, image_span(windowed, grad_input ? y_sizes : x_sizes));
  const uint64_t plain_span = image_span(plain, c.pass == ConvPass::GradWeight ? y_sizes : w_sizes);
  p.plain_offset = launch.bind(plain.ref, plain_span);
  p.bias_offset = c.bias ? launch.bind(*c.bias, g.out_channels) : launch.bind(plain.ref, plain_span);

  // Consecutive threads load along whichever index is adjacent in memory (conv2d.wgsl's A_K_FAST).
  const bool cl = c.channels_last;
  switch (c.pass) {
    case ConvPass::Forward: plan.a_k_fast = cl, plan.b_k_fast = true; break;
    case ConvPass::GradInput: plan.a_k_fast = cl, plan.b_k_fast = !cl; break;
    case ConvPass::GradWeight: plan.a_k_fast = !cl, plan.b_k_fast = !cl; break;
  }
  return plan;
}

std::string gemm_source(const Conv2dProblem& c, const Plan& plan, c10::ScalarType type) {
  return render(wgsl::conv2d, {{"acc", "f32"},
                               {"pass", std::to_string(static_cast<uint32_t>(c.pass))},
                               {"channels_last", c.channels_last ? "true" : "false"},
                               {"with_bias", c.bias ? "true" : "false"},
                               {"a_k_fast", plan.a_k_fast ? "true" : "false"},
                               {"tile", std::to_string(plan.tile)},
                               {"step", std::to_string(plan.tile == kWideTile ? kKStep / 2 : kKStep)},
                               {"b_k_fast", plan.b_k_fast ? "true" : "false"},
                               {"load_windowed", load(type, "windowed")},
                               {"load_plain", load(type, "plain")},
                               {"load_bias", load(type, "bias")}});
}

void run_gemm(Plan& plan, const Conv2dProblem& c, uint32_t max_groups) {
  const c10::ScalarType type = c.pass == ConvPass::GradInput ? c.grad_output.ref.dtype : c.input.ref.dtype;
  const std::string name = std::string(name_of(c.pass, kPassOps)) + "/" + dtype_info(type)->name +
      (c.channels_last ? "/cl" : "") + (c.bias ? "/bias" : "") + (plan.a_k_fast ? "/ak" : "") +
      (plan.b_k_fast ? "/bk" : "") + (plan.tile == kWideTile ? "/t128" : "");
  const uint64_t tile = plan.tile;
  const uint64_t row_tiles = (plan.shape.m + tile - 1) / tile;
  for (uint64_t first = 0; first < std::max<uint64_t>(row_tiles, 1); first += max_groups) {
    plan.params.row_base = static_cast<uint32_t>(first * tile);
    plan.run3d(name, [&, type] { return gemm_source(c, plan, type); },
               static_cast<uint32_t>((plan.shape.n + tile - 1) / tile),
               static_cast<uint32_t>(std::min<uint64_t>(row_tiles - first, max_groups)),
               static_cast<uint32_t>(c.g.groups * plan.slices));
  }
}

// grad_input: one walk per phase of the stride that holds input positions; the other passes: one.
std::vector<Walk> walks(const Conv2dProblem& c) {
  const Conv2dGeometry& g = c.g;
  if (c.pass != ConvPass::GradInput) return {whole_walk(g)};
  std::vector<Walk> out;
  for (uint64_t ph = 0; ph < g.stride[0]; ++ph)
    for (uint64_t pw = 0; pw < g.stride[1]; ++pw) {
      Walk walk{grad_input_axis(g.in_h, g.padding[0], g.kernel_h, g.dilation[0], g.stride[0], ph),
                grad_input_axis(g.in_w, g.padding[1], g.kernel_w, g.dilation[1], g.stride[1], pw)};
      if (walk.h.grid && walk.w.grid) out.push_back(walk);
    }
  return out;
}

} // namespace

namespace conv {

std::string load(c10::ScalarType type, const char* array) {
  return typed_load(type, array, "i");
}

// Both kernels compute spatial positions in i32: every extent stays far below 2^31.
void require_spatial(Launch& launch, const Conv2dGeometry& g) {
  for (uint64_t v : {g.in_h, g.in_w, g.out_h, g.out_w, g.padding[0] + g.dilation[0] * g.kernel_h,
                     g.padding[1] + g.dilation[1] * g.kernel_w, g.stride[0] * g.out_h, g.stride[1] * g.out_w})
    launch.require(v < (1ull << 30), "a spatial extent of 2^30 or more");
}

// grad_weight's partials [slice][o][column] summed in slice order into the output.
void sum_slices(runtime::DeviceContext& context, const Conv2dProblem& c, const DeviceTensorRef& partials,
                uint64_t slices) {
  const uint64_t rows = c.g.out_channels, cols = (c.g.in_channels / c.g.groups) * c.g.kernel_h * c.g.kernel_w;
  LaunchPlan<wgsl::GemmSplitSumParams> plan(context, name_of(c.pass, kPassOps), c.input.ref.dtype);
  Launch& launch = plan.launch;
  wgsl::GemmSplitSumParams& params = plan.params;
  params.dims[0] = static_cast<uint32_t>(rows);
  params.dims[1] = static_cast<uint32_t>(cols);
  params.dims[2] = static_cast<uint32_t>(slices);
  params.dims[3] = static_cast<uint32_t>(rows * cols);
  const uint64_t w_sizes[4] = {c.g.out_channels, c.g.in_channels / c.g.groups, c.g.kernel_h, c.g.kernel_w};
  params.out[0] = launch.bind(c.out.ref, image_span(c.out, w_sizes));
  params.out[2] = static_cast<uint32_t>(c.out.strides[0]);
  params.out[3] = 1;
  params.partials[0] = launch.bind(partials, slices * rows * cols);
  params.partials[1] = static_cast<uint32_t>(rows * cols);
  params.addend[0] = launch.bind(c.out.ref, image_span(c.out, w_sizes));
  plan.run("conv2d_split_sum",
           [] {
             return render(wgsl::gemm_split_sum, {{"acc", "f32"},
                                                  {"operand_array", "array<f32>"},
                                                  {"load_addend", "addend[i]"},
                                                  {"alpha", "1.0"},
                                                  {"beta", "0.0"},
                                                  {"with_addend", "false"},
                                                  {"workgroup_size", std::to_string(kWorkgroupSize)}});
           },
           groups_for(rows * cols));
}

} // namespace conv

bool conv2d_is_depthwise(const Conv2dGeometry& g) {
  return g.groups > 1 && g.groups == g.in_channels && g.out_channels % g.groups == 0;
}

std::string conv2d_unsupported_reason(runtime::DeviceContext& context, const Conv2dProblem& c) {
  if (std::optional<std::string> reason = depthwise_unsupported_reason(context, c)) return *reason;
  // Planned without partials: the scratch they need is the allocator's to give, and the one-pass
  // kernel binds nothing larger.
  for (const Walk& walk : walks(c)) {
    // Checked at the split conv2d() will run (without binding its partials).
    const uint64_t slices = split_slices(context, c, gemm_shape(c, walk));
    std::string reason = plan(context, c, walk, nullptr, slices).reason();
    if (!reason.empty()) return reason;
  }
  return "";
}

void conv2d(runtime::DeviceContext& context, const Conv2dProblem& c) {
  const uint32_t max_groups = context.limits().maxComputeWorkgroupsPerDimension;
  if (run_depthwise_conv2d(context, c)) return;
  if (c.pass == ConvPass::GradInput) {
    for (const Walk& walk : walks(c)) {
      Plan phase = plan(context, c, walk);
      run_gemm(phase, c, max_groups); // throws the reason when it cannot run
    }
    return;
  }
  const Walk walk = whole_walk(c.g);
  Plan whole = plan(context, c, walk);
  const GemmShape s = whole.shape;
  const uint64_t slices = split_slices(context, c, s);
  if (slices <= 1) {
    run_gemm(whole, c, max_groups); // throws the reason when it cannot run
    return;
  }
  // Freed (back to the pool) on return: later work reusing the memory is recorded after these
  // dispatches.
  const uint64_t count = slices * c.g.out_channels * s.n;
  c10::DataPtr holder = runtime::device_allocator().allocate_on(context.index(), count * sizeof(float));
  const runtime::BufferSpan span = runtime::device_allocator().resolve(holder.get());
  const DeviceTensorRef partials{span.buffer, span.buffer_size, span.offset / sizeof(float), c10::kFloat};
  Plan split = plan(context, c, walk, &partials, slices);
  if (!split.launch.ok()) {
    run_gemm(whole, c, max_groups);
    return;
  }
  run_gemm(split, c, max_groups);
  sum_slices(context, c, partials, slices);
}

} // namespace torch_dml::kernels
