#include "kernels/layer_norm_kernel.h"

#include <vector>

#include "kernels/dtypes.h"
#include "kernels/generated/wgsl_params.h"
#include "kernels/generated/wgsl_sources.h"
#include "kernels/held_row.h"
#include "kernels/launch.h"

namespace torch_dml::kernels {
namespace {

// float64 computes in float64, the other dtypes in float32 (through the bits of a u32 array).
c10::ScalarType acc_type(c10::ScalarType type) {
  return type == c10::kDouble ? c10::kDouble : c10::kFloat;
}

// The holes layer_norm.wgsl and layer_norm_backward.wgsl share: the arithmetic type and the words
// the inputs are read from.
std::vector<Hole> row_holes(c10::ScalarType type) {
  const bool f64 = type == c10::kDouble;
  return {{"acc", f64 ? "f64" : "f32"},
          {"word", f64 ? "f64" : "u32"},
          {"load_x", typed_load(type, "x", "i")},
          {"workgroup_size", std::to_string(kWorkgroupSize)}};
}

// rstd from `variance` and the eps bits: float64 as the CPU takes it, 1 / sqrt; float32 keeps the
// inverseSqrt its results were pinned with.
Hole rstd_hole(c10::ScalarType type) {
  return {"rstd", type == c10::kDouble ? "f64(1) / sqrt(variance + bitcast<f64>((u64(p.eps.y) << 32u) | u64(p.eps.x)))"
                                       : "inverseSqrt(variance + bitcast<f32>(p.eps.x))"};
}

// eps as the kernels' Params hold it: the bits of the arithmetic type's value.
void set_eps(uint32_t (&bits)[2], double eps, c10::ScalarType type) {
  encode_scalar(eps, type == c10::kDouble ? Value::F64 : Value::F32, type, bits);
}

std::string forward_source(c10::ScalarType type, bool weight, bool bias) {
  std::vector<Hole> holes = row_holes(type);
  holes.push_back(rstd_hole(type));
  holes.push_back({"apply_weight", weight ? "v * " + typed_load(type, "weight", "p.weight_offset + i") : "v"});
  holes.push_back({"apply_bias", bias ? "v + " + typed_load(type, "bias", "p.bias_offset + i") : "v"});
  return render(wgsl::layer_norm, holes);
}

std::string backward_source(c10::ScalarType type, bool weight) {
  std::vector<Hole> holes = row_holes(type);
  holes.push_back({"load_g", typed_load(type, "g", "i")});
  holes.push_back({"load_weight", weight ? typed_load(type, "weight", "p.weight_offset + i") : "1.0"});
  return render(wgsl::layer_norm_backward, holes);
}

// A Vector of ones, the weight of a layer norm without one.
std::string ones(uint32_t width) {
  std::string v = "Vector(1.0";
  for (uint32_t c = 1; c < width; ++c) v += ", 1.0";
  return v + ")";
}

std::string held_forward_source(c10::ScalarType type, c10::ScalarType out_type, const HeldShape& shape, bool weight,
                                bool bias) {
  const uint32_t width = shape.vec_width;
  std::vector<Hole> holes = {{"acc", type == c10::kDouble ? "f64" : "f32"},
                             rstd_hole(type),
                             {"out_word", held_word(out_type, width)},
                             {"in_word", held_word(type, width)},
                             {"load_x", held_load(type, width, "x")},
                             {"load_weight", weight ? held_load(type, width, "weight") : "Vector()"},
                             {"load_bias", bias ? held_load(type, width, "bias") : "Vector()"},
                             {"store", held_store(out_type, width, "out")},
                             {"apply_weight", weight ? "v[c] * w[c]" : "v[c]"},
                             {"apply_bias", bias ? "v[c] + b[c]" : "v[c]"}};
  shape.add_holes(holes);
  return render(wgsl::layer_norm_held, holes);
}

std::string held_backward_source(c10::ScalarType type, c10::ScalarType out_type, const HeldShape& shape, bool weight,
                                 bool keep_weighted) {
  const uint32_t width = shape.vec_width;
  const c10::ScalarType acc = acc_type(type);
  std::vector<Hole> holes = {{"acc", acc == c10::kDouble ? "f64" : "f32"},
                             {"out_word", held_word(out_type, width)},
                             // Without `weighted` its binding holds the input gradient, which may be
                             // smaller than one vector of float32: bound as scalars and never stored.
                             {"weighted_word", keep_weighted ? held_word(acc, width) : held_word(acc, 1)},
                             {"in_word", held_word(type, width)},
                             {"load_x", held_load(type, width, "x")},
                             {"load_g", held_load(type, width, "g")},
                             {"load_weight", weight ? held_load(type, width, "weight") : ones(width)},
                             {"store", held_store(out_type, width, "grad_input")},
                             {"store_weighted", keep_weighted ? held_store(acc, width, "weighted") : ""},
                             {"keep_weighted", keep_weighted ? "true" : "false"}};
  shape.add_holes(holes);
  return render(wgsl::layer_norm_held_backward, holes);
}

} // namespace

std::string layer_norm_unsupported_reason(runtime::DeviceContext& context, c10::ScalarType type, uint64_t elements) {
  if (!is_float_family(type) && type != c10::kDouble)
    return std::string("no native layer_norm for ") + c10::toString(type);
  // eps reaches the float64 kernels as two words reassembled through u64.
  if (type == c10::kDouble &&
      !(context.has(runtime::Feature::ShaderF64) && context.has(runtime::Feature::ShaderInt64)))
    return "float64 layer_norm needs shader-f64 and shader-int64, which " + context.describe() + " lacks";
  if (elements * (type == c10::kDouble ? 8 : 4) > context.limits().maxStorageBufferBindingSize)
    return "an operand larger than one storage binding";
  return "";
}

namespace {

// The operands bound in the order of both forward kernels' bindings, and the held shape if the rows
// are held. A missing weight or bias binds the input in its place (never read), `length` elements so
// the binding holds one of the shader's vectors.
struct ForwardPlan {
  Launch launch;
  std::optional<HeldShape> held;
  uint32_t out, mean, rstd, x, weight, bias; // first elements within the bindings' windows

  // Either kernel's Params but for the row length: the held kernel counts its operands in vectors of
  // `width` elements, the workgroup-per-row kernel (width 1) in elements; mean and rstd are per row.
  template <typename P>
  P params(const LayerNormForward& f, uint32_t width) const {
    P p{};
    p.rows = static_cast<uint32_t>(f.rows);
    set_eps(p.eps, f.eps, f.input.dtype);
    p.out_offset = out / width;
    p.mean_offset = mean;
    p.rstd_offset = rstd;
    p.x_offset = x / width;
    p.weight_offset = weight / width;
    p.bias_offset = bias / width;
    return p;
  }
};

ForwardPlan plan_forward(runtime::DeviceContext& context, const LayerNormForward& f) {
  const c10::ScalarType type = f.input.dtype;
  const uint64_t n = f.rows * f.length;
  ForwardPlan plan{Launch(context, "layer_norm", type), std::nullopt, 0, 0, 0, 0, 0, 0};
  Launch& launch = plan.launch;
  launch.require_u32(n, "elements");
  plan.out = launch.bind(f.out, n);
  plan.mean = launch.bind(f.mean, f.rows);
  plan.rstd = launch.bind(f.rstd, f.rows);
  plan.x = launch.bind(f.input, n);
  plan.weight = launch.bind(f.weight.value_or(f.input), f.length);
  plan.bias = launch.bind(f.bias.value_or(f.input), f.length);
  plan.held = held_plan(launch, type, f.out.dtype, acc_type(type), f.length,
                        {{0, plan.out}, {3, plan.x}, {4, plan.weight}, {5, plan.bias}});
  if (!plan.held)
    launch.require(f.out.dtype == acc_type(type), std::string("no ") + c10::toString(f.out.dtype) + " output for these rows");
  return plan;
}

} // namespace

bool layer_norm_forward_stores(runtime::DeviceContext& context, const LayerNormForward& f) {
  return plan_forward(context, f).launch.ok();
}

void layer_norm_forward(runtime::DeviceContext& context, const LayerNormForward& f) {
  if (f.rows == 0 || f.length == 0) return;
  const c10::ScalarType type = f.input.dtype;
  ForwardPlan plan = plan_forward(context, f);
  const std::string variant = std::string(dtype_info(type)->name) + (f.weight ? "/w" : "") + (f.bias ? "/b" : "");
  if (plan.held) {
    const HeldShape shape = *plan.held;
    const uint32_t width = shape.vec_width;
    auto p = plan.params<wgsl::LayerNormHeldParams>(f, width);
    p.width = static_cast<uint32_t>(f.length / width);
    const std::string name = "layer_norm_held/" + variant + "/" + dtype_info(f.out.dtype)->name + "/" + shape.name();
    plan.launch.run(name, [&] { return held_forward_source(type, f.out.dtype, shape, f.weight.has_value(), f.bias.has_value()); },
                    p, shape.groups(f.rows));
    return;
  }
  auto p = plan.params<wgsl::LayerNormParams>(f, 1);
  p.length = static_cast<uint32_t>(f.length);
  plan.launch.run("layer_norm/" + variant, [&] { return forward_source(type, f.weight.has_value(), f.bias.has_value()); }, p,
                  f.rows);
}

namespace {

// As ForwardPlan, for the backward kernels: a missing weight binds the input in its place, and when the
// weight gradient is not wanted `weighted` binds the input gradient (never written).
struct BackwardPlan {
  Launch launch;
  std::optional<HeldShape> held;
  uint32_t grad_input, weighted, g, x, mean, rstd, weight;

  // As ForwardPlan::params.
  template <typename P>
  P params(const LayerNormBackward& b, uint32_t width) const {
    P p{};
    p.rows = static_cast<uint32_t>(b.rows);
    p.grad_input_offset = grad_input / width;
    p.weighted_offset = weighted / width;
    p.g_offset = g / width;
    p.x_offset = x / width;
    p.mean_offset = mean;
    p.rstd_offset = rstd;
    p.weight_offset = weight / width;
    return p;
  }
};

BackwardPlan plan_backward(runtime::DeviceContext& context, const LayerNormBackward& b) {
  const c10::ScalarType type = b.input.dtype;
  const uint64_t n = b.rows * b.length;
  BackwardPlan plan{Launch(context, "layer_norm_backward", type), std::nullopt, 0, 0, 0, 0, 0, 0, 0};
  Launch& launch = plan.launch;
  launch.require_u32(n, "elements");
  plan.grad_input = launch.bind(b.grad_input, n);
  plan.weighted = launch.bind(b.weighted.value_or(b.grad_input), n);
  plan.g = launch.bind(b.grad, n);
  plan.x = launch.bind(b.input, n);
  plan.mean = launch.bind(b.mean, b.rows);
  plan.rstd = launch.bind(b.rstd, b.rows);
  plan.weight = launch.bind(b.weight.value_or(b.input), b.length);
  plan.held = held_plan(launch, type, b.grad_input.dtype, acc_type(type), b.length,
                        {{0, plan.grad_input}, {1, plan.weighted}, {2, plan.g}, {3, plan.x}, {6, plan.weight}});
  if (!plan.held) {
    launch.require(b.grad_input.dtype == acc_type(type),
                   std::string("no ") + c10::toString(b.grad_input.dtype) + " input gradient for these rows");
    launch.require(b.weighted.has_value(), "the workgroup-per-row kernel always writes `weighted`");
  }
  return plan;
}

} // namespace

bool layer_norm_backward_stores(runtime::DeviceContext& context, const LayerNormBackward& b) {
  return plan_backward(context, b).launch.ok();
}

void layer_norm_backward(runtime::DeviceContext& context, const LayerNormBackward& b) {
  if (b.rows == 0 || b.length == 0) return;
  const c10::ScalarType type = b.input.dtype;
  BackwardPlan plan = plan_backward(context, b);
  const bool weight = b.weight.has_value(), keep_weighted = b.weighted.has_value();
  if (plan.held) {
    const HeldShape shape = *plan.held;
    const uint32_t width = shape.vec_width;
    auto p = plan.params<wgsl::LayerNormHeldBackwardParams>(b, width);
    p.width = static_cast<uint32_t>(b.length / width);
    const std::string name = std::string("layer_norm_held_backward/") + dtype_info(type)->name + (weight ? "/w" : "") +
                             (keep_weighted ? "/weighted/" : "/") + dtype_info(b.grad_input.dtype)->name + "/" +
                             shape.name();
    plan.launch.run(name, [&] { return held_backward_source(type, b.grad_input.dtype, shape, weight, keep_weighted); }, p,
                    shape.groups(b.rows));
    return;
  }
  auto p = plan.params<wgsl::LayerNormBackwardParams>(b, 1);
  p.length = static_cast<uint32_t>(b.length);
  const std::string name = std::string("layer_norm_backward/") + dtype_info(type)->name + (weight ? "/w" : "");
  plan.launch.run(name, [&] { return backward_source(type, weight); }, p, b.rows);
}

} // namespace torch_dml::kernels
