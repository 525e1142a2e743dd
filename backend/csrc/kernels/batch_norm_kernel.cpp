#include "kernels/batch_norm_kernel.h"

#include <cstring>

#include "kernels/dtypes.h"
#include "kernels/generated/wgsl_params.h"
#include "kernels/generated/wgsl_sources.h"
#include "kernels/launch.h"
#include "kernels/wgsl_store.h"

namespace torch_dml::kernels {
namespace {

bool computable(c10::ScalarType type) {
  return is_float_family(type) || type == c10::kDouble;
}

// float64 for float64 input, float32 for the rest.
c10::ScalarType accumulation(c10::ScalarType input) {
  return input == c10::kDouble ? c10::kDouble : c10::kFloat;
}

const char* acc_wgsl(c10::ScalarType input) {
  return input == c10::kDouble ? "f64" : "f32";
}

void require_types(Launch& launch, runtime::DeviceContext& context, const DeviceTensorRef& input,
                   std::initializer_list<const DeviceTensorRef*> acc_operands,
                   std::initializer_list<const DeviceTensorRef*> typed_operands) {
  const c10::ScalarType type = input.dtype;
  launch.require(computable(type), "no batch_norm kernel for this dtype");
  // The scalars reach float64 kernels as two words reassembled through u64.
  launch.require(type != c10::kDouble ||
                     (context.has(runtime::Feature::ShaderF64) && context.has(runtime::Feature::ShaderInt64)),
                 "float64 needs shader-f64 and shader-int64");
  for (const DeviceTensorRef* t : acc_operands)
    if (t) launch.require(t->dtype == accumulation(type), "statistics buffers must hold the accumulation dtype");
  // Parameters of 16-bit inputs may be float32 (AMP keeps them so); otherwise the input's dtype.
  for (const DeviceTensorRef* t : typed_operands)
    if (t)
      launch.require(t->dtype == type || (t->dtype == c10::kFloat && (type == c10::kHalf || type == c10::kBFloat16)),
                     "a parameter dtype other than the input's (or float32 for a 16-bit input)");
}

void set_scalar(uint32_t (&bits)[2], double value, c10::ScalarType input) {
  if (input == c10::kDouble) {
    std::memcpy(bits, &value, 8);
  } else {
    const float f = static_cast<float>(value);
    std::memcpy(&bits[0], &f, 4);
  }
}

// Threads of the per-channel kernels: a channel of few elements (late ResNet stages: 7 x 7 x batch)
// leaves most of 256 lanes idle through every barrier of the tree sums, so it gets 64.
uint32_t channel_workgroup(const BatchNormShape& s) {
  return s.count >= 4 * kWorkgroupSize ? kWorkgroupSize : 64;
}

// The per-channel kernels index elements, coefficients and their loop counters with u32.
void require_channel_bounds(Launch& launch, const BatchNormShape& s) {
  launch.require_u32(s.channels * s.count + kWorkgroupSize, "elements");
  launch.require_u32(s.channels * 4, "coefficients");
}

// The per-channel kernels' shape fields (within require_channel_bounds).
template <typename P>
void set_shape(P& p, const BatchNormShape& s) {
  p.channels = static_cast<uint32_t>(s.channels);
  p.inner = static_cast<uint32_t>(s.inner);
  p.count = static_cast<uint32_t>(s.count);
}

std::string decode(c10::ScalarType input) {
  return input == c10::kDouble ? "bitcast<f64>((u64(bits.y) << 32u) | u64(bits.x))" : "bitcast<f32>(bits.x)";
}

std::string load(const std::optional<DeviceTensorRef>& t, const std::string& array, const std::string& index,
                 const char* absent) {
  return t ? typed_load(t->dtype, array, index) : std::string(absent);
}

std::string dtype_name(c10::ScalarType type) {
  return dtype_info(type)->name;
}

// ---- forward statistics (batch_norm.wgsl)

LaunchPlan<wgsl::BatchNormParams> plan_stats(runtime::DeviceContext& context, const BatchNormForward& f) {
  LaunchPlan<wgsl::BatchNormParams> plan(context, "native_batch_norm", f.input.dtype);
  Launch& launch = plan.launch;
  const BatchNormShape& s = f.shape;
  const uint64_t total = s.channels * s.count;
  require_types(launch, context, f.input,
                {f.running_mean ? &*f.running_mean : nullptr, f.running_var ? &*f.running_var : nullptr,
                 f.save_mean ? &*f.save_mean : nullptr, f.save_invstd ? &*f.save_invstd : nullptr, &f.coef},
                {f.weight ? &*f.weight : nullptr, f.bias ? &*f.bias : nullptr});
  launch.require(!f.weight || !f.bias || f.weight->dtype == f.bias->dtype, "weight and bias of different dtypes");
  launch.require(f.running_mean.has_value() == f.running_var.has_value(), "only one running statistic");
  launch.require(f.training || f.running_mean, "evaluation without running statistics");
  launch.require(!f.training || (f.save_mean && f.save_invstd), "training without save_mean / save_invstd");
  launch.require(f.group_channels == 1 || (f.training && !f.running_mean), "group statistics with running ones");
  require_channel_bounds(launch, s);
  const uint64_t coefficients = s.channels * f.group_channels * 4;
  launch.require_u32(coefficients + kWorkgroupSize, "coefficients");
  if (!launch.ok()) return plan;
  wgsl::BatchNormParams& p = plan.params;
  set_shape(p, s);
  p.group_channels = static_cast<uint32_t>(f.group_channels);
  p.groups = static_cast<uint32_t>(f.groups ? f.groups : s.channels);
  set_scalar(p.eps, f.eps, f.input.dtype);
  set_scalar(p.momentum, f.momentum, f.input.dtype);
  // Operands a variant does not use are bound to a placeholder of a fitting element size.
  p.x_offset = launch.bind(f.input, total);
  const uint64_t affine_channels = (f.groups ? f.groups : s.channels) * f.group_channels;
  p.weight_offset = launch.bind(f.weight.value_or(f.input), f.weight ? affine_channels : 1);
  p.bias_offset = launch.bind(f.bias.value_or(f.input), f.bias ? affine_channels : 1);
  p.running_mean_offset = launch.bind(f.running_mean.value_or(f.coef), s.channels);
  p.running_var_offset = launch.bind(f.running_var.value_or(f.coef), s.channels);
  p.save_mean_offset = launch.bind(f.save_mean.value_or(f.coef), s.channels);
  p.save_invstd_offset = launch.bind(f.save_invstd.value_or(f.coef), s.channels);
  p.coef_offset = launch.bind(f.coef, coefficients);
  return plan;
}

std::string stats_source(const BatchNormForward& f, bool update_running) {
  const c10::ScalarType type = f.input.dtype;
  const c10::ScalarType param = f.weight ? f.weight->dtype : f.bias ? f.bias->dtype : type;
  return render(wgsl::batch_norm, {{"acc", acc_wgsl(type)},
                                   {"workgroup_size", std::to_string(channel_workgroup(f.shape))},
                                   {"x_array", typed_array_type(type)},
                                   {"param_array", typed_array_type(param)},
                                   {"training", f.training ? "true" : "false"},
                                   {"update_running", update_running ? "true" : "false"},
                                   {"load_x", typed_load(type, "x", "i")},
                                   {"load_weight", load(f.weight, "weight", "p.weight_offset + c", "1.0")},
                                   {"load_bias", load(f.bias, "bias", "p.bias_offset + c", "0.0")},
                                   {"decode_scalar", decode(type)}});
}

// ---- per-element pass (batch_norm_apply.wgsl)

enum class Stage : uint32_t { Forward = 0, BackwardTraining = 1, BackwardEvaluation = 2 };

struct Apply {
  BatchNormShape shape;
  Stage stage;
  DeviceTensorRef out, x, coef;
  std::optional<DeviceTensorRef> grad;
};

LaunchPlan<wgsl::BatchNormApplyParams> plan_apply(runtime::DeviceContext& context, const Apply& a) {
  const char* op = a.stage == Stage::Forward ? "native_batch_norm" : "native_batch_norm_backward";
  LaunchPlan<wgsl::BatchNormApplyParams> plan(context, op, a.x.dtype);
  Launch& launch = plan.launch;
  const uint64_t total = a.shape.channels * a.shape.count;
  const bool packed = c10::elementSize(a.out.dtype) == 2;
  const uint64_t words = packed ? (total + 1) / 2 : total;
  const uint64_t threads = (total + 3) / 4;
  launch.require(a.out.dtype == a.x.dtype && (!a.grad || a.grad->dtype == a.x.dtype), "mixed input dtypes");
  launch.require(!packed || a.out.element_offset % 2 == 0, "a 16-bit output not at a word boundary");
  launch.require_u32(total + 4, "elements");
  if (!launch.ok()) return plan;
  wgsl::BatchNormApplyParams& p = plan.params;
  p.total = static_cast<uint32_t>(total);
  p.threads = static_cast<uint32_t>(threads);
  p.channels = static_cast<uint32_t>(a.shape.channels);
  p.inner = static_cast<uint32_t>(a.shape.inner);
  if (packed) {
    DeviceTensorRef out_words = a.out;
    out_words.element_offset /= 2;
    p.out_offset = launch.bind(out_words, words, 4);
  } else {
    p.out_offset = launch.bind(a.out, total);
  }
  p.x_offset = launch.bind(a.x, total);
  p.grad_offset = launch.bind(a.grad.value_or(a.x), a.grad ? total : 1);
  p.coef_offset = launch.bind(a.coef, a.shape.channels * 4);
  return plan;
}

void run_apply(runtime::DeviceContext& context, const Apply& a) {
  LaunchPlan<wgsl::BatchNormApplyParams> plan = plan_apply(context, a);
  const c10::ScalarType type = a.x.dtype;
  const auto stage = static_cast<uint32_t>(a.stage);
  plan.launch.run(
      "batch_norm_apply/" + dtype_name(type) + "/" + std::to_string(stage),
      [&] {
        return render(wgsl::batch_norm_apply, {{"acc", acc_wgsl(type)},
                                               {"workgroup_size", std::to_string(kWorkgroupSize)},
                                               {"out_array", typed_array_type(type)},
                                               {"x_array", typed_array_type(type)},
                                               {"stage", std::to_string(stage)},
                                               {"load_x", typed_load(type, "x", "i")},
                                               {"load_grad", typed_load(type, "grad", "i")},
                                               {"stored", store_form(type, "v")},
                                               {"store", std::string(c10::elementSize(type) == 2
                                                                         ? wgsl::part_batch_norm_store_halves
                                                                         : wgsl::part_batch_norm_store_one)}});
      },
      plan.params, groups_for(plan.params.threads));
}

// ---- backward sums (batch_norm_backward.wgsl)

LaunchPlan<wgsl::BatchNormBackwardParams> plan_backward(runtime::DeviceContext& context, const BatchNormBackward& b) {
  LaunchPlan<wgsl::BatchNormBackwardParams> plan(context, "native_batch_norm_backward", b.input.dtype);
  Launch& launch = plan.launch;
  const BatchNormShape& s = b.shape;
  const uint64_t total = s.channels * s.count;
  require_types(launch, context, b.input, {&b.grad_weight, &b.grad_bias, &b.coef},
                {&b.mean, &b.spread, b.weight ? &*b.weight : nullptr});
  launch.require(b.grad.dtype == b.input.dtype, "grad and input of different dtypes");
  launch.require(b.mean.dtype == b.spread.dtype, "mean and invstd (or var) of different dtypes");
  require_channel_bounds(launch, s);
  if (!launch.ok()) return plan;
  wgsl::BatchNormBackwardParams& p = plan.params;
  set_shape(p, s);
  set_scalar(p.eps, b.eps, b.input.dtype);
  p.x_offset = launch.bind(b.input, total);
  p.grad_offset = launch.bind(b.grad, total);
  p.mean_offset = launch.bind(b.mean, s.channels);
  p.spread_offset = launch.bind(b.spread, s.channels);
  p.weight_offset = launch.bind(b.weight.value_or(b.input), b.weight ? s.channels : 1);
  p.grad_weight_offset = launch.bind(b.grad_weight, s.channels);
  p.grad_bias_offset = launch.bind(b.grad_bias, s.channels);
  p.coef_offset = launch.bind(b.coef, s.channels * 4);
  return plan;
}

} // namespace

std::string batch_norm_forward_unsupported_reason(runtime::DeviceContext& context, const BatchNormForward& f) {
  std::string reason = plan_stats(context, f).launch.reason();
  if (reason.empty())
    reason = plan_apply(context, {f.affine.value_or(f.shape), Stage::Forward, f.out, f.input, f.coef, {}}).launch.reason();
  return reason;
}

std::string batch_norm_backward_unsupported_reason(runtime::DeviceContext& context, const BatchNormBackward& b) {
  std::string reason = plan_backward(context, b).launch.reason();
  if (reason.empty() && b.grad_input) {
    const Stage stage = b.training ? Stage::BackwardTraining : Stage::BackwardEvaluation;
    reason = plan_apply(context, {b.shape, stage, *b.grad_input, b.input, b.coef, b.grad}).launch.reason();
  }
  return reason;
}

void batch_norm_forward(runtime::DeviceContext& context, const BatchNormForward& f) {
  if (f.shape.channels == 0 || f.shape.count == 0) return;
  LaunchPlan<wgsl::BatchNormParams> plan = plan_stats(context, f);
  const bool update_running = f.training && f.running_mean.has_value();
  const c10::ScalarType type = f.input.dtype;
  const std::string param = f.weight ? dtype_name(f.weight->dtype) : f.bias ? dtype_name(f.bias->dtype) : "-";
  const std::string name = "batch_norm/" + std::to_string(channel_workgroup(f.shape)) + "/" + dtype_name(type) + "/" +
                           param + (f.weight ? "/w" : "") + (f.bias ? "/b" : "") + (f.training ? "/train" : "/eval") +
                           (update_running ? "/running" : "");
  plan.launch.run(name, [&] { return stats_source(f, update_running); }, plan.params, f.shape.channels);
  run_apply(context, {f.affine.value_or(f.shape), Stage::Forward, f.out, f.input, f.coef, {}});
}

void batch_norm_backward(runtime::DeviceContext& context, const BatchNormBackward& b) {
  if (b.shape.channels == 0 || b.shape.count == 0) return;
  LaunchPlan<wgsl::BatchNormBackwardParams> plan = plan_backward(context, b);
  const c10::ScalarType type = b.input.dtype;
  const std::string name = "batch_norm_backward/" + std::to_string(channel_workgroup(b.shape)) + "/" +
                           dtype_name(type) + "/" + dtype_name(b.mean.dtype) + "/" +
                           (b.weight ? dtype_name(b.weight->dtype) : std::string("-")) +
                           (b.training ? "/train" : "/eval");
  plan.launch.run(
      name,
      [&] {
        return render(wgsl::batch_norm_backward,
                      {{"acc", acc_wgsl(type)},
                       {"workgroup_size", std::to_string(channel_workgroup(b.shape))},
                       {"x_array", typed_array_type(type)},
                       {"stat_array", typed_array_type(b.mean.dtype)},
                       {"param_array", typed_array_type(b.weight ? b.weight->dtype : type)},
                       {"training", b.training ? "true" : "false"},
                       {"load_x", typed_load(type, "x", "i")},
                       {"load_grad", typed_load(type, "grad", "i")},
                       {"load_mean", typed_load(b.mean.dtype, "mean_in", "c")},
                       {"load_spread", typed_load(b.spread.dtype, "spread_in", "c")},
                       {"load_weight", load(b.weight, "weight", "p.weight_offset + c", "1.0")},
                       {"decode_scalar", decode(type)}});
      },
      plan.params, b.shape.channels);
  if (b.grad_input) {
    const Stage stage = b.training ? Stage::BackwardTraining : Stage::BackwardEvaluation;
    run_apply(context, {b.shape, stage, *b.grad_input, b.input, b.coef, b.grad});
  }
}

} // namespace torch_dml::kernels
